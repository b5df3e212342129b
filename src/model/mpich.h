/* mpich.h: MPICH's folding of a non-power-of-two process count (Thakur,
 * Rabenseifner & Gropp 2005, SIV): with pof2 = 2^floor(lg P) and
 * rem = P - pof2, the first 2*rem ranks pair up, even rank r hands its data
 * to r+1 and sits out; the remaining pof2 ranks get new ranks 0..pof2-1. */
#ifndef PM_MPICH_H
#define PM_MPICH_H

/* New rank of r, or -1 if r sits out. */
static inline int pm_fold_newrank(int r, int rem)
{
	if (r < 2 * rem)
		return r % 2 ? r / 2 : -1;
	return r - rem;
}

/* Rank behind new rank nr. */
static inline int pm_fold_rank(int nr, int rem)
{
	return nr < rem ? 2 * nr + 1 : nr + rem;
}

#endif
