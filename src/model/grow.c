/* grow.c: growing and freeing arrays (grow.h). */
#include "model/grow.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t pm_grow_cap(size_t cap, size_t need, size_t first)
{
	size_t c = cap ? cap : first;

	while (c < need) {
		if (c > SIZE_MAX / 2)
			return need;
		c *= 2;
	}
	return c;
}

int pm_resize(void *pp, size_t n, size_t elem)
{
	void *p, *q;
	size_t bytes;

	if (elem && n > SIZE_MAX / elem)
		return -1;
	bytes = n * elem;
	memcpy(&p, pp, sizeof p);
	q = realloc(p, bytes ? bytes : 1);
	if (!q)
		return -1;
	memcpy(pp, &q, sizeof q);
	return 0;
}

int pm_grow_past(void *pp, size_t *cap, size_t need, size_t elem, size_t first)
{
	size_t c = pm_grow_cap(*cap, need, first);
	if (pm_resize(pp, c, elem))
		return -1;
	*cap = c;
	return 0;
}

void pm_free_each(void *const *pp, size_t n)
{
	void *p;

	for (size_t i = 0; i < n; i++) {
		memcpy(&p, pp[i], sizeof p);
		free(p);
		p = NULL;
		memcpy(pp[i], &p, sizeof p);
	}
}
