/* grow.h: the one way a store grows, and the one way a release function
 * frees what it owns.  Every growing array in perfmodel
 * doubles its capacity, from a first size, until it holds what it must,
 * and reallocates with the byte count checked for overflow.  Arrays that
 * grow together (two columns of one table) take one capacity from
 * pm_grow_cap and pm_resize each column to it.
 */
#ifndef PM_GROW_H
#define PM_GROW_H

#include <stddef.h>

/* The capacity that holds need elements: cap (first when cap is 0)
 * doubled until it is at least need; need itself where doubling would
 * overflow. */
size_t pm_grow_cap(size_t cap, size_t need, size_t first);

/* Reallocate the array whose address is at pp (a T ** for any object
 * type T) to n elements of elem bytes.  0, or -1 with the array and *pp
 * unchanged when n x elem overflows or memory runs out. */
int pm_resize(void *pp, size_t n, size_t elem);

/* pm_grow's growing half: need > *cap. */
int pm_grow_past(void *pp, size_t *cap, size_t need, size_t elem, size_t first);

/* Make the array at pp, of capacity *cap, hold need elements: grows it
 * with pm_grow_cap and pm_resize and updates *cap.  0 or -1 (nothing
 * changed).  Inline, as schedules and simulators call it for every
 * transfer and request they add: where it fits, a comparison. */
static inline int pm_grow(void *pp, size_t *cap, size_t need, size_t elem, size_t first)
{
	return need <= *cap ? 0 : pm_grow_past(pp, cap, need, elem, first);
}

/* Free each of the n arrays whose addresses are in pp (a T ** each, for
 * any object type T) and set it to NULL: a release function lists what
 * it owns, void *own[] = {&s->a, &s->b}, and frees it in one call. */
void pm_free_each(void *const *pp, size_t n);

#endif
