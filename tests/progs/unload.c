/* Opens the driver with dlopen, calls it through dlsym, closes it and exits: what a
 * static-cudart program does when its initialization fails (cudart closes the driver it
 * opened; apps/jacobi under the stand-in). Prints whether the driver is gone; the library
 * must not call into it at exit. */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>

int main(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h) {
        fprintf(stderr, "dlopen(libcuda.so.1): %s\n", dlerror());
        return 2;
    }
    CUresult (*init)(unsigned) = (CUresult(*)(unsigned))dlsym(h, "cuInit");
    CUresult (*version)(int *) = (CUresult(*)(int *))dlsym(h, "cuDriverGetVersion");
    int v = 0;
    CUresult rc = init && version ? init(0) : CUDA_ERROR_NOT_FOUND;
    if (rc == CUDA_SUCCESS)
        rc = version(&v);
    if (rc != CUDA_SUCCESS) {
        fprintf(stderr, "unload: driver calls failed (%d)\n", (int)rc);
        return 2;
    }
    if (dlclose(h) != 0) {
        fprintf(stderr, "dlclose: %s\n", dlerror());
        return 2;
    }
    printf("unload: version=%d driver %s\n", v,
           dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD) ? "still loaded" : "unloaded");
    return 0;
}
