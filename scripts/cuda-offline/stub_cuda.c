// A stand-in libcuda.so.1 for machines without an NVIDIA GPU: enough of the driver API for
// cubecl-cuda 0.10 to create a client, JIT its kernels through the real NVRTC and "launch"
// them. Memory is host memory and launches do nothing, so results are garbage: the point is the
// PTX, which cuModuleLoadData writes to $STUB_PTX_DIR (one file per kernel) for ptxas -v.
// Device attributes are an H200's (sm_90, 132 SMs).
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
#define OK 0

static void trace(const char *f) { if (getenv("STUB_TRACE")) fprintf(stderr, "[stub] %s\n", f); }
#define T trace(__func__)

CUresult cuInit(unsigned f) { T; return OK; }
CUresult cuDriverGetVersion(int *v) { T; *v = 13000; return OK; }
CUresult cuDeviceGetCount(int *c) { T; *c = 1; return OK; }
CUresult cuDeviceGet(CUdevice *d, int o) { T; *d = 0; return OK; }
CUresult cuDeviceGetName(char *n, int len, CUdevice d) { T; snprintf(n, len, "NVIDIA H200 (offline stub)"); return OK; }
CUresult cuDeviceTotalMem_v2(size_t *b, CUdevice d) { T; *b = (size_t)16 << 30; return OK; }
CUresult cuMemGetInfo_v2(size_t *f, size_t *t) { T; *f = (size_t)15 << 30; *t = (size_t)16 << 30; return OK; }
CUresult cuDeviceGetUuid(void *u, CUdevice d) { T; memset(u, 0, 16); return OK; }
CUresult cuDeviceGetUuid_v2(void *u, CUdevice d) { T; memset(u, 0, 16); return OK; }

CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d) {
  T;
  switch (attr) {
    case 1: *v = 1024; break;            // MAX_THREADS_PER_BLOCK
    case 2: *v = 1024; break;            // MAX_BLOCK_DIM_X
    case 3: *v = 1024; break;            // Y
    case 4: *v = 64; break;              // Z
    case 5: *v = 2147483647; break;      // MAX_GRID_DIM_X
    case 6: *v = 65535; break;
    case 7: *v = 65535; break;
    case 8: *v = 49152; break;           // MAX_SHARED_MEMORY_PER_BLOCK
    case 10: *v = 32; break;             // WARP_SIZE
    case 12: *v = 65536; break;          // REGISTERS_PER_BLOCK
    case 13: *v = 1980000; break;        // CLOCK_RATE
    case 14: *v = 512; break;            // TEXTURE_ALIGNMENT
    case 16: *v = 132; break;            // MULTIPROCESSOR_COUNT
    case 36: *v = 2619000; break;        // MEMORY_CLOCK_RATE
    case 37: *v = 6144; break;           // GLOBAL_MEMORY_BUS_WIDTH
    case 38: *v = 50331648; break;       // L2_CACHE_SIZE
    case 39: *v = 2048; break;           // MAX_THREADS_PER_MULTIPROCESSOR
    case 75: *v = 9; break;              // COMPUTE_CAPABILITY_MAJOR
    case 76: *v = 0; break;              // MINOR
    case 81: *v = 233472; break;         // MAX_SHARED_MEMORY_PER_MULTIPROCESSOR
    case 82: *v = 65536; break;          // MAX_REGISTERS_PER_MULTIPROCESSOR
    case 97: *v = 232448; break;         // MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
    case 115: *v = 1; break;             // MEMORY_POOLS_SUPPORTED
    default: *v = 0; break;
  }
  return OK;
}

static int ctx_dummy, stream_dummy, event_dummy, module_dummy;
CUresult cuDevicePrimaryCtxRetain(void **c, CUdevice d) { T; *c = &ctx_dummy; return OK; }
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) { T; return OK; }
CUresult cuCtxSetCurrent(void *c) { T; return OK; }
CUresult cuCtxGetCurrent(void **c) { T; *c = &ctx_dummy; return OK; }
CUresult cuCtxSynchronize(void) { T; return OK; }
CUresult cuCtxGetDevice(CUdevice *d) { T; *d = 0; return OK; }
CUresult cuCtxCreate_v2(void **c, unsigned f, CUdevice d) { T; *c = &ctx_dummy; return OK; }
CUresult cuStreamCreate(void **s, unsigned f) { T; *s = &stream_dummy; return OK; }
CUresult cuStreamCreateWithPriority(void **s, unsigned f, int p) { T; *s = &stream_dummy; return OK; }
CUresult cuStreamDestroy_v2(void *s) { T; return OK; }
CUresult cuStreamSynchronize(void *s) { T; return OK; }
CUresult cuStreamWaitEvent(void *s, void *e, unsigned f) { T; return OK; }
CUresult cuStreamQuery(void *s) { T; return OK; }
CUresult cuEventCreate(void **e, unsigned f) { T; *e = &event_dummy; return OK; }
CUresult cuEventRecord(void *e, void *s) { T; return OK; }
CUresult cuEventSynchronize(void *e) { T; return OK; }
CUresult cuEventQuery(void *e) { T; return OK; }
CUresult cuEventDestroy_v2(void *e) { T; return OK; }
CUresult cuEventElapsedTime(float *ms, void *a, void *b) { T; *ms = 0.001f; return OK; }
CUresult cuEventElapsedTime_v2(float *ms, void *a, void *b) { T; *ms = 0.001f; return OK; }

static void *host_alloc(size_t n) {
  if (n == 0) n = 1;
  void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) { T; void *h = host_alloc(n); if (!h) return 2; *p = (CUdeviceptr)h; return OK; }
CUresult cuMemAllocAsync(CUdeviceptr *p, size_t n, void *s) { return cuMemAlloc_v2(p, n); }
CUresult cuMemFree_v2(CUdeviceptr p) { T; return OK; }
CUresult cuMemFreeAsync(CUdeviceptr p, void *s) { T; return OK; }
CUresult cuMemAllocHost_v2(void **p, size_t n) { T; *p = host_alloc(n); return *p ? OK : 2; }
CUresult cuMemFreeHost(void *p) { T; return OK; }
/* cubeport's staged transfers allocate their pinned chunks with cuMemHostAlloc. */
CUresult cuMemHostAlloc(void **p, size_t n, unsigned f) { T; *p = host_alloc(n); return *p ? OK : 2; }
CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned f) { T; return OK; }
CUresult cuMemHostUnregister(void *p) { T; return OK; }
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *h, size_t n, void *s) { T; memcpy((void *)d, h, n); return OK; }
CUresult cuMemcpyDtoHAsync_v2(void *h, CUdeviceptr d, size_t n, void *s) { T; memcpy(h, (void *)d, n); return OK; }
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr a, CUdeviceptr b, size_t n, void *s) { T; memmove((void *)a, (void *)b, n); return OK; }
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *h, size_t n) { T; memcpy((void *)d, h, n); return OK; }
CUresult cuMemcpyDtoH_v2(void *h, CUdeviceptr d, size_t n) { T; memcpy(h, (void *)d, n); return OK; }
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, void *s) { T; memset((void *)d, v, n); return OK; }
CUresult cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, void *s) { T; for (size_t i = 0; i < n; i++) ((unsigned *)d)[i] = v; return OK; }

// Same layout as CUDA_MEMCPY2D (v2).
typedef struct {
  size_t srcXInBytes, srcY; int srcMemoryType; const void *srcHost; CUdeviceptr srcDevice; void *srcArray; size_t srcPitch;
  size_t dstXInBytes, dstY; int dstMemoryType; void *dstHost; CUdeviceptr dstDevice; void *dstArray; size_t dstPitch;
  size_t WidthInBytes, Height;
} Memcpy2D;
CUresult cuMemcpy2DAsync_v2(const Memcpy2D *c, void *s) {
  T;
  const char *src = c->srcMemoryType == 1 ? (const char *)c->srcHost : (const char *)c->srcDevice;
  char *dst = c->dstMemoryType == 1 ? (char *)c->dstHost : (char *)c->dstDevice;
  src += c->srcY * c->srcPitch + c->srcXInBytes;
  dst += c->dstY * c->dstPitch + c->dstXInBytes;
  for (size_t r = 0; r < c->Height; r++) memcpy(dst + r * c->dstPitch, src + r * c->srcPitch, c->WidthInBytes);
  return OK;
}

static int ptx_count;
CUresult cuModuleLoadData(void **m, const void *image) {
  T;
  const char *dir = getenv("STUB_PTX_DIR");
  if (dir) {
    const char *entry = strstr((const char *)image, ".entry ");
    char name[200] = "kernel";
    if (entry) { sscanf(entry + 7, "%199[A-Za-z0-9_]", name); }
    char path[600];
    snprintf(path, sizeof path, "%s/%03d_%s.ptx", dir, ptx_count++, name);
    FILE *f = fopen(path, "w");
    if (f) { fputs((const char *)image, f); fclose(f); }
  }
  *m = &module_dummy;
  return OK;
}
CUresult cuModuleLoadDataEx(void **m, const void *image, unsigned n, void *o, void **v) { return cuModuleLoadData(m, image); }
CUresult cuModuleUnload(void *m) { T; return OK; }
static int func_dummy;
CUresult cuModuleGetFunction(void **f, void *m, const char *name) { T; *f = &func_dummy; return OK; }
CUresult cuFuncSetAttribute(void *f, int a, int v) { T; return OK; }
CUresult cuFuncGetAttribute(int *v, int a, void *f) { T; *v = 0; return OK; }
CUresult cuFuncSetCacheConfig(void *f, int c) { T; return OK; }
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned smem, void *s, void **p, void **e) {
  T;
  // STUB_LAUNCH_LOG=1: each launch's grid, cube and dynamic shared memory, on stderr.
  if (getenv("STUB_LAUNCH_LOG"))
    fprintf(stderr, "launch grid %ux%ux%u cube %ux%ux%u smem %u\n", gx, gy, gz, bx, by, bz, smem);
  return OK;
}
CUresult cuLaunchKernelEx(const void *c, void *f, void **p, void **e) { T; return OK; }
CUresult cuGetErrorString(CUresult r, const char **s) { *s = "stub error"; return OK; }
CUresult cuGetErrorName(CUresult r, const char **s) { *s = "CUDA_ERROR_STUB"; return OK; }
CUresult cuPointerGetAttribute(void *d, int a, CUdeviceptr p) { T; return OK; }
CUresult cuMemPoolCreate(void **p, const void *props) { T; *p = &ctx_dummy; return OK; }
CUresult cuMemPoolDestroy(void *p) { T; return OK; }
CUresult cuMemPoolGetAttribute(void *p, int a, void *v) { T; memset(v, 0, 8); return OK; }
CUresult cuMemPoolSetAttribute(void *p, int a, void *v) { T; return OK; }
CUresult cuDeviceGetDefaultMemPool(void **p, CUdevice d) { T; *p = &ctx_dummy; return OK; }
CUresult cuMemPoolTrimTo(void *p, size_t n) { T; return OK; }
CUresult cuDeviceGetMemPool(void **p, CUdevice d) { T; *p = &ctx_dummy; return OK; }
CUresult cuTensorMapEncodeTiled(void *m, int dt, unsigned r, void *g, const void *d, const void *st, const void *b,
                                const void *es, int il, int sw, int l2, int oob) { T; memset(m, 0, 128); return OK; }
// NVRTC 13 dlopens libcuda and asks for the driver's private export tables; refusing makes it
// compile without them.
CUresult cuGetExportTable(const void **table, const void *id) { T; *table = NULL; return 801; }
CUresult cuGetProcAddress_v2(const char *s, void **p, int v, unsigned long long f, int *st) { T; *p = NULL; return 500; }
