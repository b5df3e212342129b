/* limits.c: the work limits' scale (limits.h). */
#include "model/limits.h"

double pm_limit_scale = 1.0;
