# The CUDA kernels (kernels/cuda) on a GPU against f64 references
# (test_cuda_kernels.c says how).  Included from tests/CMakeLists.txt;
# registered only where the code objects are built (nvcc present), and a
# skip (exit 77) where there is no driver or device, as on CI.
get_property(cuda_kernel_dir GLOBAL PROPERTY CDNN_CUDA_KERNEL_DIR)
if(NOT cuda_kernel_dir)
  return()
endif()
add_executable(test_cuda_kernels
  ${CMAKE_CURRENT_LIST_DIR}/test_cuda_kernels.c
  ${CMAKE_CURRENT_LIST_DIR}/test_matmul.c
  ${CMAKE_CURRENT_LIST_DIR}/test_pointwise.c
  ${CMAKE_CURRENT_LIST_DIR}/test_rows.c
  ${CMAKE_CURRENT_LIST_DIR}/test_reduce.c
  ${CMAKE_CURRENT_LIST_DIR}/test_sdpa.c
  ${CMAKE_CURRENT_LIST_DIR}/test_conv.c
  ${CMAKE_CURRENT_LIST_DIR}/check.c
  ${CMAKE_CURRENT_LIST_DIR}/gpu.c)
target_include_directories(test_cuda_kernels PRIVATE ${CMAKE_CURRENT_LIST_DIR}
                           ${PROJECT_SOURCE_DIR}/kernels/cuda)
target_link_libraries(test_cuda_kernels PRIVATE cdnn_sdk m)
add_dependencies(test_cuda_kernels cuda_kernels)
add_test(NAME cuda_kernels COMMAND test_cuda_kernels ${cuda_kernel_dir})
set_tests_properties(cuda_kernels PROPERTIES SKIP_RETURN_CODE 77 LABELS cuda_kernels)
