/* test_msccl.c: exported MSCCL algorithms as the MSCCL executor takes and
 * runs them (model/msccl_write.c).
 *
 * Independent of the writer: the file is parsed here with libxml2 and held
 * to what the executor's parser requires (Azure/msccl-executor-nccl,
 * src/misc/msccl/msccl_parser.cc: no XML declaration, every attribute it
 * reads, its step types, counts below MSCCL_MAX_COUNT = 72, steps below
 * MSCCL_MAX_NUM_STEPS, channels below MAXCHANNELS = 32, at most 32 thread
 * blocks sending and 32 receiving per channel, at most 4096 elements per
 * GPU, a wait carried by the step after its nops).  Then it is run with
 * the executor's semantics: each thread block executes its steps in
 * order, a step waits for the step its depid/deps names, sends and
 * receives of a (sender, receiver, channel) connection pair first in,
 * first out.  Every step takes time: it starts (a receive takes its
 * message, a reduction reads its destination) and finishes later (writes),
 * and the run interleaves starts and finishes at random, so that a chunk
 * written or reduced into by two steps at once, or overwritten while a
 * send reads it, is caught (each cell carries a version).  Contributions
 * are random 64-bit words summed modulo 2^64; an all-reduce must leave
 * every rank's every chunk equal to the sum over ranks, exactly once. */
#include "helpers.h"
#include "model/msccl.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdint.h>
#include <unistd.h>

#define MAXG 64
#define MAXTB 256
#define MAXST 4096

struct xstep {
	int type;	/* 0 s, 1 r, 2 rrc, 3 nop */
	int off, cnt, depid, deps;
};

struct xtb {
	int send, recv, ch, n, pc, busy;
	struct xstep st[MAXST];
	uint64_t snap[72];	/* a send's data, read at its start */
	uint64_t ver[72];
	int done;		/* steps finished */
};

struct xgpu {
	int ntb;
	struct xtb *tb;
	uint64_t *buf, *ver;
};

struct msg {
	int src, dst, ch, cnt, off;
	uint64_t v[72];
	struct msg *next;
};

struct exe {
	int ngpus, nchunks, nch;
	struct xgpu g[MAXG];
	struct msg *head, *tail;
	char why[256];
};

static int attr(xmlNodePtr n, const char *k, int *out)
{
	xmlChar *v = xmlGetProp(n, BAD_CAST k);
	char *end;
	if (!v)
		return -1;
	long x = strtol((const char *)v, &end, 10);
	int bad = *end != '\0';
	xmlFree(v);
	*out = (int)x;
	return bad ? -1 : 0;
}

static int has(xmlNodePtr n, const char *k)
{
	xmlChar *v = xmlGetProp(n, BAD_CAST k);
	xmlFree(v);
	return v != NULL;
}

/* The executor's parser's rules; 0 or a message in e->why. */
static int load(const char *path, int max_steps, struct exe *e)
{
	char *text = slurp(path);
	int bad = 0, elems;

	memset(e, 0, sizeof *e);
	cr_assert(text, "cannot read %s", path);
	size_t lead = strspn(text, " \n\r");
	if (strncmp(text + lead, "<algo ", 6) || strchr(text, '\t')) {
		snprintf(e->why, sizeof e->why, "the file must open with <algo and hold no tabs (executor's parser)");
		free(text);
		return -1;
	}
	free(text);
	xmlDocPtr doc = xmlReadFile(path, NULL, XML_PARSE_NONET);
	cr_assert(doc, "not XML");
	xmlNodePtr a = xmlDocGetRootElement(doc);
	static const char *const need[] = {"nchunksperloop", "nchannels", "ngpus", "proto", "coll", "minBytes", "maxBytes",
					   "inplace", "outofplace"};
	for (size_t k = 0; k < sizeof need / sizeof *need; k++)
		if (!has(a, need[k])) {
			snprintf(e->why, sizeof e->why, "<algo> lacks %s", need[k]);
			xmlFreeDoc(doc);
			return -1;
		}
	bad |= attr(a, "ngpus", &e->ngpus) | attr(a, "nchunksperloop", &e->nchunks) | attr(a, "nchannels", &e->nch);
	cr_assert(!bad && e->ngpus <= MAXG && e->nch <= 32, "algo attributes");
	for (xmlNodePtr g = a->children; g; g = g->next) {
		int id, ic, oc, sc;
		if (g->type != XML_ELEMENT_NODE)
			continue;
		cr_assert(!attr(g, "id", &id) && !attr(g, "i_chunks", &ic) && !attr(g, "o_chunks", &oc) && !attr(g, "s_chunks", &sc));
		cr_assert(id >= 0 && id < e->ngpus && ic == e->nchunks && sc >= 0);
		struct xgpu *G = &e->g[id];
		G->tb = calloc(MAXTB, sizeof *G->tb);
		G->buf = calloc((size_t)e->nchunks, sizeof *G->buf);
		G->ver = calloc((size_t)e->nchunks, sizeof *G->ver);
		int sends[32] = {0}, recvs[32] = {0};
		elems = 2;
		for (xmlNodePtr t = g->children; t; t = t->next) {
			int bid, sp, rp, ch;
			if (t->type != XML_ELEMENT_NODE)
				continue;
			cr_assert(!attr(t, "id", &bid) && !attr(t, "send", &sp) && !attr(t, "recv", &rp) && !attr(t, "chan", &ch));
			cr_assert(bid == G->ntb && bid < MAXTB, "thread block ids in order from 0");
			cr_assert(sp != id && rp != id && sp >= -1 && rp >= -1 && ch >= 0 && ch < e->nch);
			struct xtb *T = &G->tb[G->ntb++];
			T->send = sp, T->recv = rp, T->ch = ch;
			sends[ch] += sp >= 0, recvs[ch] += rp >= 0;
			elems++;
			int pending_nops = 0;
			for (xmlNodePtr s = t->children; s; s = s->next) {
				int sn, so, dof, cnt, di, ds, hd;
				if (s->type != XML_ELEMENT_NODE)
					continue;
				cr_assert(!attr(s, "s", &sn) && !attr(s, "srcoff", &so) && !attr(s, "dstoff", &dof) &&
					  !attr(s, "cnt", &cnt) && !attr(s, "depid", &di) && !attr(s, "deps", &ds) &&
					  !attr(s, "hasdep", &hd) && has(s, "srcbuf") && has(s, "dstbuf"));
				xmlChar *ty = xmlGetProp(s, BAD_CAST "type");
				int type = !xmlStrcmp(ty, BAD_CAST "s") ? 0 : !xmlStrcmp(ty, BAD_CAST "r") ? 1
					 : !xmlStrcmp(ty, BAD_CAST "rrc") ? 2 : !xmlStrcmp(ty, BAD_CAST "nop") ? 3 : -1;
				xmlFree(ty);
				cr_assert(type >= 0, "a step type this test runs");
				if (sn != T->n || sn >= max_steps) {
					snprintf(e->why, sizeof e->why, "gpu %d tb %d: step %d (expected below %d, in order)", id, bid, sn, max_steps);
					xmlFreeDoc(doc);
					return -1;
				}
				if (type != 3 && (cnt < 0 || cnt >= 72 || so + cnt > ic || dof + cnt > ic)) {
					snprintf(e->why, sizeof e->why, "gpu %d tb %d step %d: count %d at %d (expected below 72, in bounds)", id, bid, sn, cnt, so);
					xmlFreeDoc(doc);
					return -1;
				}
				cr_assert(type != 0 || sp >= 0, "a send without a send peer");
				cr_assert(type == 0 || type == 3 || rp >= 0, "a receive without a receive peer");
				if (type == 3)
					pending_nops += di >= 0;
				else {
					cr_assert(!pending_nops || di >= 0,
						  "gpu %d tb %d step %d: nops carry waits but the step carries none (the executor refuses it)", id, bid, sn);
					pending_nops = 0;
				}
				T->st[T->n++] = (struct xstep){type, dof, cnt, di, ds};
				elems++;
			}
		}
		for (int c = 0; c < 32; c++)
			cr_assert(sends[c] <= 32 && recvs[c] <= 32, "gpu %d channel %d: %d sending, %d receiving thread blocks", id, c, sends[c], recvs[c]);
		cr_assert(elems <= 4096, "gpu %d: %d elements", id, elems);
	}
	xmlFreeDoc(doc);
	return 0;
}

static struct msg *front(struct exe *e, int src, int dst, int ch)
{
	for (struct msg *m = e->head; m; m = m->next)
		if (m->src == src && m->dst == dst && m->ch == ch)
			return m;
	return NULL;
}

static void unlink_msg(struct exe *e, struct msg *m)
{
	struct msg **p = &e->head, *prev = NULL;
	while (*p != m)
		prev = *p, p = &(*p)->next;
	*p = m->next;
	if (e->tail == m)
		e->tail = prev;
	free(m);
}

static int ready(struct exe *e, int g, struct xtb *T)
{
	if (T->busy || T->pc == T->n)
		return 0;
	const struct xstep *s = &T->st[T->pc];
	if (s->depid >= 0 && e->g[g].tb[s->depid].done <= s->deps)
		return 0;
	if (s->type == 1 || s->type == 2)
		return front(e, T->recv, g, T->ch) != NULL;
	return 1;
}

/* Start: a send reads its data, a receive takes its message and a
 * reduction reads its destination; versions remembered. */
static void start(struct exe *e, int g, struct xtb *T)
{
	const struct xstep *s = &T->st[T->pc];
	struct xgpu *G = &e->g[g];
	T->busy = 1;
	for (int k = 0; k < s->cnt; k++)
		T->ver[k] = G->ver[s->off + k];
	if (s->type == 0)
		for (int k = 0; k < s->cnt; k++)
			T->snap[k] = G->buf[s->off + k];
	if (s->type == 1 || s->type == 2) {
		struct msg *m = front(e, T->recv, g, T->ch);
		cr_assert(m->cnt == s->cnt && m->off == s->off, "gpu %d receives [%d,+%d) from %d, the message is [%d,+%d)",
			  g, s->off, s->cnt, T->recv, m->off, m->cnt);
		for (int k = 0; k < s->cnt; k++)
			T->snap[k] = s->type == 2 ? G->buf[s->off + k] + m->v[k] : m->v[k];
		unlink_msg(e, m);
	}
}

/* Finish: a cell changed since the start is a race. */
static int finish(struct exe *e, int g, struct xtb *T)
{
	const struct xstep *s = &T->st[T->pc];
	struct xgpu *G = &e->g[g];
	for (int k = 0; k < s->cnt; k++)
		if (G->ver[s->off + k] != T->ver[k]) {
			snprintf(e->why, sizeof e->why, "gpu %d: chunk %d written while thread block step (%s) was using it",
				 g, s->off + k, s->type == 0 ? "send" : "receive");
			return -1;
		}
	if (s->type == 0) {
		struct msg *m = calloc(1, sizeof *m);
		*m = (struct msg){g, T->send, T->ch, s->cnt, s->off, {0}, NULL};
		memcpy(m->v, T->snap, sizeof(uint64_t) * (size_t)s->cnt);
		if (e->tail)
			e->tail->next = m;
		else
			e->head = m;
		e->tail = m;
	} else if (s->type != 3) {
		for (int k = 0; k < s->cnt; k++) {
			G->buf[s->off + k] = T->snap[k];
			G->ver[s->off + k]++;
		}
	}
	T->busy = 0;
	T->pc++;
	T->done++;
	return 0;
}

/* Run the file with random interleavings; 0 when every rank ends with
 * every chunk summed over all ranks exactly once. */
static int run(struct exe *e, unsigned seed)
{
	uint64_t want[4096] = {0};
	unsigned r = seed * 2654435761u + 1;

	cr_assert(e->nchunks <= 4096);
	for (int g = 0; g < e->ngpus; g++)
		for (int c = 0; c < e->nchunks; c++) {
			uint64_t v = ((uint64_t)rand_r(&r) << 40) ^ ((uint64_t)rand_r(&r) << 20) ^ (uint64_t)rand_r(&r);
			e->g[g].buf[c] = v;
			e->g[g].ver[c] = 0;
			want[c] += v;
		}
	for (int g = 0; g < e->ngpus; g++)
		for (int t = 0; t < e->g[g].ntb; t++)
			e->g[g].tb[t].pc = e->g[g].tb[t].busy = e->g[g].tb[t].done = 0;
	for (;;) {
		struct { int g, t; } cand[MAXG * MAXTB];
		int n = 0;
		for (int g = 0; g < e->ngpus; g++)
			for (int t = 0; t < e->g[g].ntb; t++)
				if (e->g[g].tb[t].busy || ready(e, g, &e->g[g].tb[t]))
					cand[n].g = g, cand[n++].t = t;
		if (!n)
			break;
		int k = (int)(rand_r(&r) % (unsigned)n);
		struct xtb *T = &e->g[cand[k].g].tb[cand[k].t];
		if (T->busy ? finish(e, cand[k].g, T) : (start(e, cand[k].g, T), 0))
			return -1;
	}
	for (int g = 0; g < e->ngpus; g++)
		for (int t = 0; t < e->g[g].ntb; t++)
			if (e->g[g].tb[t].pc != e->g[g].tb[t].n) {
				snprintf(e->why, sizeof e->why, "deadlock: gpu %d thread block %d stops at step %d of %d", g, t,
					 e->g[g].tb[t].pc, e->g[g].tb[t].n);
				return -1;
			}
	cr_assert(e->head == NULL, "messages left unreceived");
	int wrong = 0;
	for (int g = 0; g < e->ngpus; g++)
		for (int c = 0; c < e->nchunks; c++)
			wrong += e->g[g].buf[c] != want[c];
	if (wrong)
		snprintf(e->why, sizeof e->why, "%d of %d (gpu, chunk) cells wrong", wrong, e->ngpus * e->nchunks);
	return wrong ? -1 : 0;
}

static void release(struct exe *e)
{
	for (int g = 0; g < MAXG; g++) {
		free(e->g[g].tb);
		free(e->g[g].buf);
		free(e->g[g].ver);
	}
	while (e->head)
		unlink_msg(e, e->head);
}

/* Export algo on topo, load it as the executor would and run it. */
static void exported_runs(const char *algo, const char *topo, int max_steps)
{
	struct pm_topo *t = topo_or_die(topo);
	struct pm_inst in;
	struct pm_sched s, x;
	struct pm_err err;
	char path[64];
	static struct exe e;

	snprintf(path, sizeof path, "/tmp/pm_msccl_%d.xml", (int)getpid());
	resolve_or_die(algo, t, 0, &in);
	cr_assert_eq(pm_algo_at_size(&in, 1 << 20, &in, &err), PM_OK, "%s", err.msg);
	cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK, "%s on %s: %s", algo, topo, err.msg);
	cr_assert_eq(pm_sched_expand(&s, &x, PM_SCHED_MAX_XFERS, &err), PM_OK);
	FILE *f = fopen(path, "w");
	struct pm_msccl_opts o = {"Simple", 0, 1e12, max_steps};
	cr_assert_eq(pm_msccl_write(f, &x, in.label, "allreduce", &o, &err), PM_OK, "%s on %s: %s", algo, topo, err.msg);
	fclose(f);
	cr_assert_eq(load(path, max_steps, &e), 0, "%s on %s: %s", algo, topo, e.why);
	for (unsigned seed = 1; seed <= 6; seed++)
		cr_assert_eq(run(&e, seed), 0, "%s on %s, interleaving %u: %s", algo, topo, seed, e.why);
	release(&e);
	remove(path);
	pm_sched_release(&x);
	pm_sched_release(&s);
	pm_topo_free(t);
}

Test(msccl, every_algorithm_runs_as_the_executor_runs_it)
{
	static const char *const algos[] = {"ring", "bidir-ring", "rabenseifner", "recdoubling", "binomial",
					    "tree", "dbtree", "chain", "multitree", "hring"};
	static const char *const topos[] = {"torus:4x4", "torus:3x3", "switch:8", "fattree:4,2"};
	for (size_t a = 0; a < sizeof algos / sizeof *algos; a++)
		for (size_t k = 0; k < sizeof topos / sizeof *topos; k++) {
			struct pm_topo *t = topo_or_die(topos[k]);
			struct pm_inst in;
			struct pm_err err;
			int ok = pm_algo_resolve(algos[a], t, 0, &in, &err) == PM_OK;
			pm_topo_free(t);
			if (ok)	/* rabenseifner and recdoubling need 2^k ranks */
				exported_runs(algos[a], topos[k], 64);
		}
	exported_runs("2d-ring", "torus:4x4", 64);
	exported_runs("multiphase", "torus:2x2x2", 64);
}

/* A ring of 32 ranks needs 62 steps in each thread block and more with
 * its waits: past 16 steps it continues on further channels, and still
 * runs right; the executor's other limits refuse what cannot fit. */
Test(msccl, long_thread_blocks_continue_on_channels)
{
	exported_runs("ring", "switch:32", 16);
	exported_runs("multitree", "switch:16", 8);

	struct pm_topo *t = topo_or_die("switch:48");
	struct pm_inst in;
	struct pm_sched s, x;
	struct pm_err err;
	resolve_or_die("multitree", t, 0, &in);
	cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK);
	cr_assert_eq(pm_sched_expand(&s, &x, PM_SCHED_MAX_XFERS, &err), PM_OK);
	FILE *f = fopen("/dev/null", "w");
	struct pm_msccl_opts o = {"Simple", 0, 1e12, 64};
	cr_assert_eq(pm_msccl_write(f, &x, in.label, "allreduce", &o, &err), PM_EINPUT);
	cr_assert(strstr(err.msg, "thread blocks"), "%s", err.msg);
	fclose(f);
	pm_sched_release(&x);
	pm_sched_release(&s);
	pm_topo_free(t);
}

/* The replay can fail: the same MULTITREE export with its waits taken
 * out (every depid -1, what a writer that forgot the hazards would give)
 * races or computes a wrong all-reduce in some interleaving. */
Test(msccl, the_replay_catches_missing_waits)
{
	struct pm_topo *t = topo_or_die("torus:4x4");
	struct pm_inst in;
	struct pm_sched s, x;
	struct pm_err err;
	char path[64], cmd[256];
	static struct exe e;
	int failed = 0;

	snprintf(path, sizeof path, "/tmp/pm_msccl_nodeps_%d.xml", (int)getpid());
	resolve_or_die("multitree", t, 0, &in);
	cr_assert_eq(pm_algo_schedule(&in, &s, &err), PM_OK);
	cr_assert_eq(pm_sched_expand(&s, &x, PM_SCHED_MAX_XFERS, &err), PM_OK);
	FILE *f = fopen(path, "w");
	struct pm_msccl_opts o = {"Simple", 0, 1e12, 64};
	cr_assert_eq(pm_msccl_write(f, &x, in.label, "allreduce", &o, &err), PM_OK);
	fclose(f);
	snprintf(cmd, sizeof cmd, "sed -i -e 's/depid=\"[0-9]*\"/depid=\"-1\"/g' -e 's/type=\"nop\"/type=\"nop\"/' %s", path);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(load(path, 64, &e), 0, "%s", e.why);
	for (unsigned seed = 1; seed <= 6 && !failed; seed++)
		failed = run(&e, seed) != 0;
	cr_assert(failed, "a file without its waits ran right in every interleaving");
	release(&e);
	remove(path);
	pm_sched_release(&x);
	pm_sched_release(&s);
	pm_topo_free(t);
}
