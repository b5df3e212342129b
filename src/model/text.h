/* text.h: small string helpers shared by every area: nearest-name
 * suggestions for mistyped names (as git does for commands) and bounded
 * string copies.
 */
#ifndef PM_TEXT_H
#define PM_TEXT_H

#include <stddef.h>

struct pm_err;

/* Index of the name closest to s by edit distance, or -1 when nothing is
 * close enough to be worth suggesting.  Ties go to the earlier name. */
int pm_nearest(const char *s, const char *const *names, int n);

/* Index of s among the n names, or -1. */
int pm_pick(const char *s, const char *const *names, int n);

/* Write "a, b, c" (the n names) into buf. */
void pm_join(char *buf, size_t size, const char *const *names, int n);

/* The one message for a name that is not among names: "unknown WHAT
 * 'name' (expected one of a, b, c; did you mean 'b'?)", or with tail
 * (", such as torus:8x8") where nothing is close enough to suggest. */
void pm_unknown_text(char *buf, size_t size, const char *what, const char *name,
		     const char *const *names, int n, const char *tail);

/* A word from a table (luaL_checkoption): the index of s among the
 * NULL-terminated words, or -1 with the one message "invalid WHAT 's'
 * (expected a, b or c)" in err. */
int pm_pick_word(const char *what, const char *s, const char *const *words, struct pm_err *err);

/* A list option ("ring,dbtree", "4x8x4"): refuse an empty list and an
 * empty item (a leading, trailing or doubled separator) with a message
 * naming the option, the value and an example of what is expected. */
int pm_check_list(const char *opt, const char *s, char sep,
		  const char *example, struct pm_err *err);

/* Free the n strings of v, then v. */
void pm_free_strings(char **v, int n);

/* strncpy that always terminates. */
void pm_strlcpy(char *dst, const char *src, size_t size);

#endif
