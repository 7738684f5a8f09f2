# The kernels provider (providers/kernels) on real kernel packs, on any
# x86-64 Linux machine: packs made by the SDK's writer from the project's
# host kernels (kernels/host) and from a test kernel built in two versions
# whose outputs differ, so that a test can tell which code ran.  Included
# from tests/CMakeLists.txt, which defines CMOCKA_LIBRARY.
set(KP_TEST_KERNEL_DIR ${CMAKE_BINARY_DIR}/test-kernels)

# marked_matmul.v<MARK>.so: the true matmul plus MARK, built like the host
# kernels (no libc, one symbol); instrumented builds keep the sanitizer's
# runtime, which the process loading them provides.
foreach(mark 1 2)
  add_library(kp_marked_matmul_v${mark} MODULE ${CMAKE_CURRENT_LIST_DIR}/marked_matmul.c)
  target_include_directories(kp_marked_matmul_v${mark} PRIVATE ${PROJECT_SOURCE_DIR}/kernels/host)
  target_compile_definitions(kp_marked_matmul_v${mark} PRIVATE MARK=${mark})
  target_compile_options(kp_marked_matmul_v${mark} PRIVATE -O2 -fno-tree-loop-distribute-patterns)
  set_target_properties(kp_marked_matmul_v${mark} PROPERTIES PREFIX "" SUFFIX ".so"
    OUTPUT_NAME marked_matmul.v${mark} LIBRARY_OUTPUT_DIRECTORY ${KP_TEST_KERNEL_DIR}
    C_VISIBILITY_PRESET hidden)
  if(NOT (CDNN_SANITIZE OR CDNN_SANITIZE_THREAD OR CDNN_FUZZ))
    target_compile_options(kp_marked_matmul_v${mark} PRIVATE -g0 -fno-stack-protector)
    target_link_options(kp_marked_matmul_v${mark} PRIVATE -nostdlib -Wl,--no-undefined -s)
  endif()
endforeach()

add_executable(test_kernels_provider
  ${CMAKE_CURRENT_LIST_DIR}/test_kernels_provider.c
  ${CMAKE_CURRENT_LIST_DIR}/kp_util.c
  ${CMAKE_CURRENT_LIST_DIR}/kp_graphs.c
  ${CMAKE_CURRENT_LIST_DIR}/kp_forge.c)
target_link_libraries(test_kernels_provider PRIVATE cdnn cdnn_sdk ${CMOCKA_LIBRARY}
                      Threads::Threads m)
target_include_directories(test_kernels_provider PRIVATE ${PROJECT_SOURCE_DIR}/tests)
target_compile_definitions(test_kernels_provider PRIVATE
  HOST_KERNEL_DIR="${CMAKE_BINARY_DIR}/kernels/host"
  TEST_KERNEL_DIR="${KP_TEST_KERNEL_DIR}"
  PROVIDER_DIR="${CDNN_OUT_PROVIDERS}")
add_dependencies(test_kernels_provider cdnn_provider_kernels cdnn_provider_cpu host_kernels
                 kp_marked_matmul_v1 kp_marked_matmul_v2)

# One ctest per claim of issue 10, each a filter over the one program.
foreach(pair "kernels_load_checks:test_every_load_check_refuses_alone*"
             "kernels_v4_refused:test_v4_kernel_refused_without_avx512"
             "kernels_rule2:test_rule2_*"
             "kernels_rule4:test_rule4_*"
             "kernels_rule10:test_rule10_*"
             "kernels_round_trips:test_round_trip_*"
             "kernels_engines:test_engines_*")
  string(REPLACE ":" ";" parts ${pair})
  list(GET parts 0 name)
  list(GET parts 1 filter)
  add_test(NAME ${name} COMMAND test_kernels_provider)
  set_tests_properties(${name} PROPERTIES ENVIRONMENT CDNN_TEST_FILTER=${filter})
endforeach()

# kernels:conv_host (the host convolution kernels) through the public API:
# round trips over shapes, layouts, dtypes and epilogues, every candidate,
# the refusals, threads.
add_executable(test_kernels_conv
  ${CMAKE_CURRENT_LIST_DIR}/test_kernels_conv.c
  ${CMAKE_CURRENT_LIST_DIR}/kp_util.c)
target_link_libraries(test_kernels_conv PRIVATE cdnn cdnn_sdk ${CMOCKA_LIBRARY}
                      Threads::Threads m)
target_include_directories(test_kernels_conv PRIVATE ${PROJECT_SOURCE_DIR}/tests)
target_compile_definitions(test_kernels_conv PRIVATE
  HOST_KERNEL_DIR="${CMAKE_BINARY_DIR}/kernels/host"
  TEST_KERNEL_DIR="${KP_TEST_KERNEL_DIR}"
  PROVIDER_DIR="${CDNN_OUT_PROVIDERS}")
add_dependencies(test_kernels_conv cdnn_provider_kernels cdnn_provider_cpu host_kernels)
add_test(NAME kernels_conv_host COMMAND test_kernels_conv)

# On a GPU (scripts/gpu-check.sh): packs of the project's CUDA code objects
# run through cdnn on cuda:0; a skip (exit 77) without a device, as on CI.
# Registered where nvcc built the code objects.
get_property(kp_cuda_kernel_dir GLOBAL PROPERTY CDNN_CUDA_KERNEL_DIR)
if(kp_cuda_kernel_dir)
  add_executable(test_kernels_cuda
    ${CMAKE_CURRENT_LIST_DIR}/test_kernels_cuda.c
    ${CMAKE_CURRENT_LIST_DIR}/kp_util.c
    ${CMAKE_CURRENT_LIST_DIR}/kp_graphs.c
    ${CMAKE_CURRENT_LIST_DIR}/kp_forge.c)
  target_link_libraries(test_kernels_cuda PRIVATE cdnn cdnn_sdk ${CMOCKA_LIBRARY}
                        Threads::Threads m)
  target_include_directories(test_kernels_cuda PRIVATE ${PROJECT_SOURCE_DIR}/tests
                             ${PROJECT_SOURCE_DIR}/kernels/cuda)
  target_compile_definitions(test_kernels_cuda PRIVATE
    HOST_KERNEL_DIR="${CMAKE_BINARY_DIR}/kernels/host"
    TEST_KERNEL_DIR="${KP_TEST_KERNEL_DIR}"
    PROVIDER_DIR="${CDNN_OUT_PROVIDERS}")
  add_dependencies(test_kernels_cuda cdnn_provider_kernels cdnn_provider_cpu cuda_kernels)
  # Rule 2 on the GPU: marked_matmul.cu built twice (MARK=1, 2) as
  # compute_80 PTX (any GPU the provider runs on), next to the project's
  # code objects so that gpu-check.sh stages them with those.
  set(kp_marked_ptx)
  foreach(mark 1 2)
    set(out ${kp_cuda_kernel_dir}/test_marked_matmul.v${mark}.compute_80.ptx)
    add_custom_command(OUTPUT ${out}
      COMMAND ${CDNN_NVCC} -std=c++17 -O3 -ptx -arch=compute_80 -DMARK=${mark}
              -I${PROJECT_SOURCE_DIR}/kernels/cuda -o ${out}.tmp
              ${CMAKE_CURRENT_LIST_DIR}/marked_matmul.cu
      COMMAND sh -c "{ cat \"$1\" && printf '\\000'; } > \"$2\"" sh ${out}.tmp ${out}
      COMMAND ${CMAKE_COMMAND} -E remove ${out}.tmp
      DEPENDS ${CMAKE_CURRENT_LIST_DIR}/marked_matmul.cu
              ${PROJECT_SOURCE_DIR}/kernels/cuda/matmul_epilogue.cuh
              ${PROJECT_SOURCE_DIR}/kernels/cuda/common.cuh
      COMMENT "nvcc test_marked_matmul.v${mark}.compute_80.ptx" VERBATIM)
    list(APPEND kp_marked_ptx ${out})
  endforeach()
  add_custom_target(kp_marked_matmul_cuda DEPENDS ${kp_marked_ptx})
  add_dependencies(test_kernels_cuda kp_marked_matmul_cuda)
  add_test(NAME kernels_cuda COMMAND test_kernels_cuda ${kp_cuda_kernel_dir})
  set_tests_properties(kernels_cuda PROPERTIES SKIP_RETURN_CODE 77 LABELS cuda_kernels)
endif()
