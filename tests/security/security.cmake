# Forged but correctly re-sealed plans and containers (issue 8): forge.py
# writes them, run_forgeries loads each one and runs whatever loads with
# buffers of exactly the sizes the plan declares.  Included from
# tests/CMakeLists.txt.
#
# Labelled "security", not "python": the python part (forge.py) loads no
# library, so the test runs under ASan+UBSan in `make test-asan` too, where
# an overrun of a declared buffer is a sanitizer report.  Without
# python3-flatbuffers the test is skipped (exit 77) and says why.
find_package(PkgConfig REQUIRED)
pkg_check_modules(SECURITY_JANSSON REQUIRED IMPORTED_TARGET jansson)

add_executable(run_forgeries ${CMAKE_CURRENT_LIST_DIR}/run_forgeries.c)
target_link_libraries(run_forgeries PRIVATE cdnn PkgConfig::SECURITY_JANSSON)
add_dependencies(run_forgeries cdnn_provider_cpu cdnn_cli cdnn_provider_kernels host_kernels)

add_test(NAME security_forgeries
  COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_forgeries.sh
          $<TARGET_FILE:cdnn_cli> $<TARGET_FILE:run_forgeries> ${PROJECT_SOURCE_DIR})
set_tests_properties(security_forgeries PROPERTIES
  LABELS security SKIP_RETURN_CODE 77 TIMEOUT 1800)

# The same for the engines of the graph format 1.3 ops (cpu:index, cpu:pool,
# cpu:resize, cpu:norm_train, cpu:sdpa_bwd): their attributes, shapes and
# types forged with the record re-derived, plans built with knobs
# (build_with_knobs) and by benchmarking, and the `cdnn` command on what
# must be refused.
add_executable(build_with_knobs ${CMAKE_CURRENT_LIST_DIR}/build_with_knobs.c)
target_link_libraries(build_with_knobs PRIVATE cdnn)
add_dependencies(build_with_knobs cdnn_provider_cpu)

add_test(NAME security_forgeries_ops
  COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_forgeries_ops.sh
          $<TARGET_FILE:cdnn_cli> $<TARGET_FILE:run_forgeries>
          $<TARGET_FILE:build_with_knobs> ${PROJECT_SOURCE_DIR})
set_tests_properties(security_forgeries_ops PROPERTIES
  LABELS security SKIP_RETURN_CODE 77 TIMEOUT 1800)

# The kernels provider's cuda plans forged and run on cuda:0
# (cuda_forgeries.c says how): registered where nvcc built the code objects,
# a skip (exit 77) without a device; scripts/gpu-check.sh runs it through
# test_forgeries_cuda.sh.  It forges with the kernels provider tests' reader
# and writer of kernel payloads (kp_forge.c).
get_property(security_cuda_kernel_dir GLOBAL PROPERTY CDNN_CUDA_KERNEL_DIR)
if(security_cuda_kernel_dir)
  add_executable(cuda_forgeries ${CMAKE_CURRENT_LIST_DIR}/cuda_forgeries.c
    ${PROJECT_SOURCE_DIR}/tests/kernels_provider/kp_forge.c
    ${PROJECT_SOURCE_DIR}/tests/kernels_provider/kp_util.c)
  target_link_libraries(cuda_forgeries PRIVATE cdnn cdnn_sdk ${CMOCKA_LIBRARY} m)
  target_include_directories(cuda_forgeries PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  target_compile_definitions(cuda_forgeries PRIVATE
    HOST_KERNEL_DIR="${CMAKE_BINARY_DIR}/kernels/host"
    TEST_KERNEL_DIR="${CMAKE_BINARY_DIR}/test-kernels")
  add_dependencies(cuda_forgeries cdnn_provider_kernels cuda_kernels)
  add_test(NAME security_forgeries_cuda
    COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_forgeries_cuda.sh $<TARGET_FILE:cuda_forgeries>
            ${security_cuda_kernel_dir})
  set_tests_properties(security_forgeries_cuda PROPERTIES
    LABELS "security;cuda_kernels" SKIP_RETURN_CODE 77)
endif()
