/*
 * The cuGetProcAddress door. The real function is asked with the caller's own
 * name, version and flags, its status and result kept as they are; the
 * pointer it returns is then swapped for our wrapper of the variant it really
 * is (substitute.c). A self-lookup of "cuGetProcAddress" thereby returns our
 * wrapper, so every later lookup comes through here too.
 */
#include "hook/hook.h"
#include "driver/real.h"

static void swap(const char *symbol, void **pfn)
{
	if (pfn && *pfn)
		*pfn = ag_hook_substitute(*pfn, symbol, AG_DOOR_PROC);
}

CUresult ag_on_cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
	CUresult rc = AG_REAL(cuGetProcAddress)(symbol, pfn, cudaVersion, flags);
	if (rc == CUDA_SUCCESS)
		swap(symbol, pfn);
	return rc;
}

CUresult ag_on_cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
				   cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)
{
	CUresult rc = AG_REAL(cuGetProcAddress_v2)(symbol, pfn, cudaVersion, flags, symbolStatus);
	if (rc == CUDA_SUCCESS)
		swap(symbol, pfn);
	return rc;
}
