/* err.h: how library functions report failure.
 *
 * Every fallible function returns PM_OK or a status below and, on failure,
 * fills a caller-owned struct pm_err with one sentence in the house grammar:
 * lower case, the problem first, the bad value in quotes, then what was
 * expected in parentheses.  The library never prints and never exits; only
 * src/cli/ turns a status into an exit code.
 */
#ifndef PM_ERR_H
#define PM_ERR_H

enum pm_status {
	PM_OK = 0,
	PM_EINTERNAL = 1,	/* out of memory, broken invariant: exit 1 */
	PM_EINPUT = 2,		/* bad user input: exit 2 */
	PM_ENOTAPPLICABLE = 3,	/* algorithm cannot run on this network */
};

struct pm_err {
	char msg[512];
};

/* Format msg into err (if err is not NULL) and return code. */
int pm_fail(struct pm_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
