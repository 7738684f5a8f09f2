# The graph artifact: binary and JSON forms, against themselves and flatc.
# Included from tests/CMakeLists.txt.
#
# The tests call internal functions (graph_format_*, graph_json_*), which
# libcdnn.so does not export, so they link cdnn_internal.

# The static copy of the library (src/CMakeLists.txt), by the name the
# tests here were written against.
add_library(cdnn_graph_format_testlib ALIAS cdnn_internal)
get_filename_component(_gf_root ${CMAKE_CURRENT_LIST_DIR}/../.. ABSOLUTE)

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

# The op table against the schema's enums, FORMATS.md's list of ops and the
# public calls; every op through the graph format, JSON and validation.
add_executable(test_op_table ${CMAKE_CURRENT_LIST_DIR}/test_op_table.c)
target_link_libraries(test_op_table PRIVATE cdnn_graph_format_testlib
  ${CMOCKA_LIBRARY})
target_compile_definitions(test_op_table PRIVATE
  GRAPH_FBS="${_gf_root}/schema/graph.fbs"
  FORMATS_MD="${_gf_root}/docs/FORMATS.md")
add_test(NAME op_table COMMAND test_op_table)
