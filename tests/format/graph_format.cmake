# The graph artifact: binary and JSON forms, against themselves and flatc.
# Included from tests/CMakeLists.txt.
#
# The tests call internal functions (graph_format_*, graph_json_*), which
# libcdnn.so does not export, so they link a static copy of the library
# built from the same sources as the target `cdnn` (plus the graph format
# files, should they not be in it yet).  One copy of the library per
# program keeps one per-thread error message, which a mixed link would not.

get_filename_component(_gf_root ${CMAKE_CURRENT_LIST_DIR}/../.. ABSOLUTE)

if(NOT TARGET PkgConfig::JANSSON)
  pkg_check_modules(JANSSON REQUIRED IMPORTED_TARGET jansson)
endif()

get_target_property(_gf_cdnn_sources cdnn SOURCES)
get_target_property(_gf_cdnn_dir cdnn SOURCE_DIR)
set(_gf_sources)
foreach(_src IN LISTS _gf_cdnn_sources)
  if(IS_ABSOLUTE ${_src})
    list(APPEND _gf_sources ${_src})
  else()
    list(APPEND _gf_sources ${_gf_cdnn_dir}/${_src})
  endif()
endforeach()
list(APPEND _gf_sources
  ${_gf_root}/src/format/graph_format.c
  ${_gf_root}/src/format/graph_json.c
  ${_gf_root}/src/format/blob.c)
list(REMOVE_DUPLICATES _gf_sources)

add_library(cdnn_graph_format_testlib STATIC ${_gf_sources})
target_include_directories(cdnn_graph_format_testlib PUBLIC
  ${_gf_root}/include ${_gf_root}/src)
target_compile_definitions(cdnn_graph_format_testlib PRIVATE
  CDNN_PROVIDER_SUBDIR="cdnn/providers")
target_link_libraries(cdnn_graph_format_testlib PUBLIC
  cdnn_format cdnn_numeric PkgConfig::JANSSON OpenSSL::Crypto
  Threads::Threads ${CMAKE_DL_LIBS} m)

# Converter used by the cross-check script.
add_executable(graph_tool ${CMAKE_CURRENT_LIST_DIR}/graph_tool.c)
target_link_libraries(graph_tool PRIVATE cdnn_graph_format_testlib)

add_executable(test_graph_format ${CMAKE_CURRENT_LIST_DIR}/test_graph_format.c)
target_link_libraries(test_graph_format PRIVATE cdnn_graph_format_testlib
  ${CMOCKA_LIBRARY})
target_compile_definitions(test_graph_format PRIVATE
  EXAMPLES_DIR="${_gf_root}/examples"
  CPU_PROVIDER_DIR="${CDNN_OUT_PROVIDERS}")
# The examples are executed on cpu:reference.
add_dependencies(test_graph_format cdnn_provider_cpu)
add_test(NAME graph_format COMMAND test_graph_format)
set_tests_properties(graph_format PROPERTIES TIMEOUT 600)

# cdnn's bytes and JSON against flatc's (Debian's flatbuffers-compiler);
# skipped (exit 77) where flatc is missing.
find_program(FLATC_EXECUTABLE flatc)
add_test(NAME graph_crosscheck
  COMMAND ${CMAKE_CURRENT_LIST_DIR}/graph_crosscheck.sh
          $<TARGET_FILE:graph_tool>
          ${_gf_root}/schema/graph.fbs
          ${_gf_root}/examples
          ${CMAKE_CURRENT_BINARY_DIR}/graph_crosscheck
          "${FLATC_EXECUTABLE}")
set_tests_properties(graph_crosscheck PROPERTIES SKIP_RETURN_CODE 77)
