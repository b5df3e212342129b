/* replay.c: a main() for the harnesses without libFuzzer, built by every
 * build: "replay_spec DIR|FILE..." feeds each file to the harness once.
 * The test suite replays the reproducers of past findings this way
 * (tests/data/fuzz/HARNESS/), so each stays fixed. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t n = 0, cap = 0;

	if (!f) {
		fprintf(stderr, "replay: cannot open '%s'\n", path);
		return 1;
	}
	for (;;) {
		if (n == cap) {
			cap = cap ? 2 * cap : 4096;
			if (!(buf = realloc(buf, cap)))
				abort();
		}
		size_t got = fread(buf + n, 1, cap - n, f);
		if (got == 0)
			break;
		n += got;
	}
	fclose(f);
	fprintf(stderr, "replay: %s (%zu bytes)\n", path, n);
	LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int bad = 0, files = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			struct dirent **ents;
			int n = scandir(argv[i], &ents, NULL, alphasort);
			for (int j = 0; j < n; j++) {
				if (ents[j]->d_name[0] != '.') {
					char path[4096];
					snprintf(path, sizeof path, "%s/%s", argv[i], ents[j]->d_name);
					bad |= replay_file(path);
					files++;
				}
				free(ents[j]);
			}
			free(n >= 0 ? ents : NULL);
		} else {
			bad |= replay_file(argv[i]);
			files++;
		}
	}
	fprintf(stderr, "replay: %d inputs, no finding\n", files);
	return bad;
}
