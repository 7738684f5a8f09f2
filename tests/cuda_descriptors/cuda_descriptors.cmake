# The CUDA descriptors against the C truth their kernels are compiled from
# (kernels/cuda/cuda_kernel.h): test_cuda_descriptors.c says how.  Needs no
# GPU and no nvcc, so it runs on every machine.  Included from
# tests/CMakeLists.txt.
pkg_check_modules(CUDA_DESCRIPTORS_JANSSON REQUIRED IMPORTED_TARGET jansson)
add_executable(test_cuda_descriptors ${CMAKE_CURRENT_LIST_DIR}/test_cuda_descriptors.c)
target_include_directories(test_cuda_descriptors PRIVATE ${PROJECT_SOURCE_DIR}/kernels/cuda)
target_link_libraries(test_cuda_descriptors PRIVATE PkgConfig::CUDA_DESCRIPTORS_JANSSON)
add_test(NAME cuda_descriptors
         COMMAND test_cuda_descriptors ${PROJECT_SOURCE_DIR}/kernels/descriptors/cuda)
# The check can fail: descriptors edited to lie, one lie each, are refused
# with the message that names the lie.
add_test(NAME cuda_descriptors_lies
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_lies.sh $<TARGET_FILE:test_cuda_descriptors>
                 ${PROJECT_SOURCE_DIR}/kernels/descriptors/cuda/matmul.json)
