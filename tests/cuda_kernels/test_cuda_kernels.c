/*
 * test_cuda_kernels.c -- every CUDA kernel of kernels/cuda on the GPU,
 * against f64 references computed here.
 *
 *   test_cuda_kernels DIR [cubin]
 *
 * DIR holds the code objects (kernels/cuda/CMakeLists.txt); with "cubin",
 * only the cubins run (the PTX's load-time compilation is slow under
 * compute-sanitizer, and its code is the same source's).  For each
 * kernel source the test loads every code object this device runs -- its
 * cubin (sm_90a on sm_90, sm_80 on sm_8x) and the compute_80 PTX, which
 * the driver compiles at load -- with cuModuleLoadData of the file's bytes,
 * as the provider does, and runs each entry point over its cases
 * (test_*.c say which, and their tolerances).  Outputs are poisoned before
 * each launch, so an element left unwritten fails, and so does one written
 * outside the output's view.
 *
 * Exit status: 0 all passed; 1 a failure; 77 (ctest's SKIP_RETURN_CODE)
 * when there is no CUDA driver, no device, or one older than sm_80.
 * The last line is "N passed, N failed".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "tests.h"

void test_report(test_state_t *state, const char *kernel, int cases, const check_t *check) {
    const int ok = check->bad == 0 && check->compared > 0;
    printf("%-4s %-26s %-28s %3d cases %9lld values  worst err/tol %.3f  rel L2 %.2e\n",
           ok ? "ok" : "FAIL", state->object, kernel, cases, (long long)check->compared,
           check->worst_ratio, check_relative_l2(check));
    if (!ok)
        printf("     first failure: %s (%lld bad)\n",
               check->compared ? check->first_bad : "nothing compared", (long long)check->bad);
    if (ok)
        state->passed++;
    else
        state->failed++;
    fflush(stdout);
}

typedef struct source_tests {
    const char *source;
    void (*run)(test_state_t *state, sdk_cu_module module);
    int sm90a_only; /* built as an sm_90a cubin alone (wgmma): run on sm_90 only */
} source_tests_t;

static const source_tests_t sources[] = {
    {"matmul_tc", test_matmul_tc}, {"matmul_f32", test_matmul_f32},
    {"pointwise", test_pointwise}, {"norm", test_norm},
    {"softmax", test_softmax},     {"reduce", test_reduce},
    {"sdpa", test_sdpa},
    {"conv", test_conv},
    {"conv_wgmma", test_conv_wgmma, 1},
    {"matmul_wgmma", test_matmul_wgmma, 1},
    {"sdpa_wgmma", test_sdpa_wgmma, 1},
    {"matmul_small_m", test_matmul_small_m, 1},
    {"rows_staged", test_rows_staged, 1},
};

static const char *base_name(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

int main(int argc, char **argv) {
    const int cubin_only = argc == 3 && strcmp(argv[2], "cubin") == 0;
    if (argc != 2 && !cubin_only) {
        fprintf(stderr, "usage: %s CODE_OBJECT_DIR [cubin]\n", argv[0]);
        return 2;
    }
    gpu_t gpu;
    const int status = gpu_open(&gpu);
    if (status)
        return status;
    printf("device: %s (sm_%d%d)\n", gpu.name, gpu.major, gpu.minor);
    test_state_t state = {.gpu = &gpu, .rng = {0x9E3779B97F4A7C15ULL}};
    /* CDNN_CUDA_TEST_SOURCE=NAME runs one source's tests alone. */
    const char *only = getenv("CDNN_CUDA_TEST_SOURCE");
    for (size_t s = 0; s < sizeof sources / sizeof sources[0]; ++s) {
        if (only && strcmp(only, sources[s].source) != 0)
            continue;
        char paths[2][512];
        int count = gpu_code_objects(&gpu, argv[1], sources[s].source, paths);
        if (sources[s].sm90a_only) {
            count = gpu.major == 9 && gpu.minor == 0; /* paths[0], the sm_90a cubin */
            if (!count)
                printf("skip %s: sm_90a only, and this is sm_%d%d\n", sources[s].source,
                       gpu.major, gpu.minor);
        }
        for (int i = 0; i < count; ++i) {
            if (cubin_only && !strstr(paths[i], ".cubin"))
                continue;
            sdk_cu_module module = gpu_load_module(&gpu, paths[i]);
            state.object = base_name(paths[i]);
            sources[s].run(&state, module);
            gpu_check(&gpu, gpu.cu->module_unload(module), "cuModuleUnload");
        }
    }
    gpu_close(&gpu);
    printf("%d passed, %d failed\n", state.passed, state.failed);
    return state.failed ? 1 : 0;
}
