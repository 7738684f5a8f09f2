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

add_executable(test_alloc_failure ${CMAKE_CURRENT_LIST_DIR}/test_alloc_failure.c)
target_link_libraries(test_alloc_failure PRIVATE cdnn_graph_format_testlib)
target_link_options(test_alloc_failure PRIVATE -rdynamic ${_oom_wrap})
target_compile_definitions(test_alloc_failure PRIVATE
  OOM_PROVIDER_DIR="${CMAKE_BINARY_DIR}/oom-providers"
  EXAMPLES_DIR="${PROJECT_SOURCE_DIR}/examples")
add_dependencies(test_alloc_failure oom_provider_cpu)
add_test(NAME alloc_failure COMMAND test_alloc_failure)
set_tests_properties(alloc_failure PROPERTIES TIMEOUT 900)
