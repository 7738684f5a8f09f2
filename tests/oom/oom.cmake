# Allocation-failure injection along the save and load paths
# (tests/oom/test_alloc_failure.c says how).  Included from
# tests/CMakeLists.txt after format/graph_format.cmake, whose static copy of
# the library (cdnn_graph_format_testlib) it links.

set(_oom_wrap -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=free)

# A copy of the CPU provider whose allocations go through the test's
# counting allocator: built with the same --wrap, it leaves __wrap_* and
# the few cdnn_* functions it calls to be resolved from the test program
# (-rdynamic there), so that the process holds one copy of the library.
get_target_property(_oom_cpu_sources cdnn_provider_cpu SOURCES)
get_target_property(_oom_cpu_dir cdnn_provider_cpu SOURCE_DIR)
set(_oom_sources)
foreach(_src IN LISTS _oom_cpu_sources)
  if(IS_ABSOLUTE ${_src})
    list(APPEND _oom_sources ${_src})
  else()
    list(APPEND _oom_sources ${_oom_cpu_dir}/${_src})
  endif()
endforeach()
add_library(oom_provider_cpu MODULE ${_oom_sources})
target_include_directories(oom_provider_cpu PRIVATE ${PROJECT_SOURCE_DIR}/include)
target_link_libraries(oom_provider_cpu PRIVATE cdnn_sdk
                      PkgConfig::OPENBLAS Threads::Threads m)
target_link_options(oom_provider_cpu PRIVATE ${_oom_wrap})
set_target_properties(oom_provider_cpu PROPERTIES PREFIX "" OUTPUT_NAME cpu
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/oom-providers)

# The kernels provider, copied the same way, and a host kernel pack of its
# matmul and norm kernels for it (made by the CLI just built, as
# kernels/packs.cmake makes the build's own; made in sanitizer builds too,
# for this test only, whose process provides the runtime their objects
# need).  Not where the host kernels are not built.
set(_oom_kernel_dir ${CMAKE_BINARY_DIR}/oom-kernels)
if(TARGET cdnn_provider_kernels AND TARGET host_kernels)
  # The provider's sources are a glob of absolute paths.
  get_target_property(_oom_kernels_sources cdnn_provider_kernels SOURCES)
  pkg_check_modules(OOM_JANSSON REQUIRED IMPORTED_TARGET jansson)
  add_library(oom_provider_kernels MODULE ${_oom_kernels_sources})
  target_include_directories(oom_provider_kernels PRIVATE ${PROJECT_SOURCE_DIR}/include
    ${PROJECT_SOURCE_DIR}/kernels/host ${PROJECT_SOURCE_DIR}/kernels/cuda)
  target_link_libraries(oom_provider_kernels PRIVATE cdnn_sdk PkgConfig::OOM_JANSSON
                        Threads::Threads ${CMAKE_DL_LIBS} m)
  target_link_options(oom_provider_kernels PRIVATE ${_oom_wrap})
  set_target_properties(oom_provider_kernels PROPERTIES PREFIX "" OUTPUT_NAME kernels
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/oom-providers)
  set(_oom_descriptors ${PROJECT_SOURCE_DIR}/kernels/descriptors/host/matmul.json
                       ${PROJECT_SOURCE_DIR}/kernels/descriptors/host/norm.json)
  add_custom_command(OUTPUT ${_oom_kernel_dir}/host.kpack
    COMMAND ${CMAKE_COMMAND} -E make_directory ${_oom_kernel_dir}
    COMMAND cdnn_cli pack build ${_oom_descriptors}
            --objects ${CMAKE_BINARY_DIR}/kernels/host -o ${_oom_kernel_dir}/host.kpack
    DEPENDS ${_oom_descriptors} cdnn_cli host_kernels
    COMMENT "cdnn pack build oom-kernels/host.kpack" VERBATIM)
  add_custom_target(oom_kernel_pack DEPENDS ${_oom_kernel_dir}/host.kpack)
  add_dependencies(oom_kernel_pack host_kernels)
  set(_oom_kernels ON)
endif()

add_executable(test_alloc_failure ${CMAKE_CURRENT_LIST_DIR}/test_alloc_failure.c)
target_link_libraries(test_alloc_failure PRIVATE cdnn_graph_format_testlib)
target_link_options(test_alloc_failure PRIVATE -rdynamic ${_oom_wrap})
target_compile_definitions(test_alloc_failure PRIVATE
  OOM_PROVIDER_DIR="${CMAKE_BINARY_DIR}/oom-providers"
  EXAMPLES_DIR="${PROJECT_SOURCE_DIR}/examples")
add_dependencies(test_alloc_failure oom_provider_cpu)
if(_oom_kernels)
  target_compile_definitions(test_alloc_failure PRIVATE OOM_KERNEL_DIR="${_oom_kernel_dir}")
  add_dependencies(test_alloc_failure oom_provider_kernels oom_kernel_pack)
endif()
add_test(NAME alloc_failure COMMAND test_alloc_failure)
set_tests_properties(alloc_failure PROPERTIES TIMEOUT 900)
