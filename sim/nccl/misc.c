/*
 * misc.c — version, error strings and the last error message.
 */
#include "nccl_int.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

static __thread char last[512];

void nccl_set_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last, sizeof(last), fmt, ap);
	va_end(ap);
}

NCCL_API(ncclResult_t, ncclGetVersion, int *version)
{
	if (version == NULL)
		return ncclInvalidArgument;
	*version = NCCL_VERSION_CODE;
	return ncclSuccess;
}

NCCL_API(const char *, ncclGetErrorString, ncclResult_t result)
{
	switch (result) {
	case ncclSuccess:
		return "no error";
	case ncclUnhandledCudaError:
		return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
	case ncclSystemError:
		return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
	case ncclInternalError:
		return "internal error - please report this issue to the NCCL developers";
	case ncclInvalidArgument:
		return "invalid argument (run with NCCL_DEBUG=WARN for details)";
	case ncclInvalidUsage:
		return "invalid usage (run with NCCL_DEBUG=WARN for details)";
	case ncclRemoteError:
		return "remote process exited or there was a network error";
	case ncclInProgress:
		return "NCCL operation in progress";
	default:
		return "unknown result code";
	}
}

NCCL_API(const char *, ncclGetLastError, ncclComm_t comm)
{
	(void)comm;
	return last;
}
