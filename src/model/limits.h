/* limits.h: the work limits that refuse an input before the work starts
 * (topology size, stored transfers, pricing visits, simulator events,
 * MULTITREE's construction on switch networks) are base values times one
 * run-time scale.  perfmodel runs at scale 1; the fuzzing harnesses'
 * volume mode (scripts/fuzz --volume) lowers it so every input is cheap
 * and a campaign reaches millions of inputs (docs/validation/07-fuzzing.md).
 * Nothing else changes the scale. */
#ifndef PM_LIMITS_H
#define PM_LIMITS_H

extern double pm_limit_scale;

/* base x scale, at least 1 */
static inline double pm_limit(double base)
{
	double v = base * pm_limit_scale;
	return v < 1 ? 1 : v;
}

#endif
