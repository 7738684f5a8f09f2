# Tampered but otherwise valid plans, containers and graphs, written with
# python3-flatbuffers and flatc (writers no one here wrote), re-sealed, and
# checked for the status and message each load gives; plus flatc's and
# python's decoding of cdnn's bytes against cdnn_blob_inspect.
# Included from tests/CMakeLists.txt.  Needs Debian's /usr/bin/python3 with
# python3-flatbuffers and python3-numpy, and flatc (flatbuffers-compiler);
# without them the test is skipped (exit 77) and says why.
add_test(NAME tamper
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/format/test_tamper.py
          $<TARGET_FILE:cdnn> ${PROJECT_SOURCE_DIR}/schema
          ${PROJECT_SOURCE_DIR}/examples)
set_tests_properties(tamper PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
