# The host kernels (kernels/host) against naive f64 references: each test
# dlopens every built object this CPU runs (by path; the provider loads
# them from memory) and calls its entry.  Included from
# tests/CMakeLists.txt; labelled "host_kernels".  Under CDNN_SANITIZE the
# objects are instrumented too and every buffer is of exact size, so an
# access outside what the arguments describe is an ASan report.
get_property(host_kernel_objects GLOBAL PROPERTY CDNN_HOST_KERNEL_OBJECTS)
get_property(host_kernel_hermetic GLOBAL PROPERTY CDNN_HOST_KERNEL_HERMETIC)
string(REPLACE ";" "," host_kernel_list "${host_kernel_objects}")

foreach(part matmul conv pointwise rows target)
  if(NOT EXISTS ${CMAKE_CURRENT_LIST_DIR}/test_host_${part}.c)
    continue()
  endif()
  add_executable(test_host_${part} ${CMAKE_CURRENT_LIST_DIR}/test_host_${part}.c
                 ${CMAKE_CURRENT_LIST_DIR}/hk_util.c)
  target_link_libraries(test_host_${part} PRIVATE cdnn_sdk ${CMOCKA_LIBRARY}
                        Threads::Threads ${CMAKE_DL_LIBS} m)
  target_compile_definitions(test_host_${part} PRIVATE
    HOST_KERNEL_DIR="${CMAKE_BINARY_DIR}/kernels/host"
    HOST_KERNEL_OBJECTS="${host_kernel_list}"
    HOST_KERNEL_HERMETIC=$<BOOL:${host_kernel_hermetic}>)
  add_dependencies(test_host_${part} host_kernels)
  add_test(NAME host_${part} COMMAND test_host_${part})
  set_tests_properties(host_${part} PROPERTIES LABELS host_kernels)
endforeach()
