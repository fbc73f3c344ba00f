/*
 * mathfn.c — CUDA's fast-math intrinsics (__expf, __logf, __sinf, ...).
 * glibc's <math.h> declares these names (its internal aliases) but libm
 * does not export them, so a kernel calling one would not link; here they
 * are, computed as the plain libm functions (a GPU's approximations differ
 * in the last bits; the simulator only promises the same bits every run).
 */
#include <math.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT float __expf(float x)
{
	return expf(x);
}
EXPORT float __exp10f(float x)
{
	return exp10f(x);
}
EXPORT float __logf(float x)
{
	return logf(x);
}
EXPORT float __log2f(float x)
{
	return log2f(x);
}
EXPORT float __log10f(float x)
{
	return log10f(x);
}
EXPORT float __sinf(float x)
{
	return sinf(x);
}
EXPORT float __cosf(float x)
{
	return cosf(x);
}
EXPORT float __tanf(float x)
{
	return tanf(x);
}
EXPORT float __powf(float x, float y)
{
	return powf(x, y);
}
EXPORT void __sincosf(float x, float *s, float *c)
{
	sincosf(x, s, c);
}
