# The FlatBuffers-format runtime (sdk/src/flatbuf.c).  Included from
# tests/CMakeLists.txt, which defines CMOCKA_LIBRARY.

add_executable(test_flatbuf ${CMAKE_CURRENT_LIST_DIR}/test_flatbuf.c)
target_include_directories(test_flatbuf PRIVATE ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(test_flatbuf PRIVATE cdnn_sdk ${CMOCKA_LIBRARY})
add_test(NAME flatbuf COMMAND test_flatbuf)

# fb_dump builds, dumps and mutates test.fbs buffers for crosscheck.py.  It
# compiles flatbuf.c itself so that it is always built with ASan+UBSan: its
# "fuzz" mode (every truncation and byte change of our, flatc's and
# python's buffers) means little without them.
add_executable(fb_dump ${CMAKE_CURRENT_LIST_DIR}/fb_dump.c
                       ${PROJECT_SOURCE_DIR}/sdk/src/flatbuf.c)
target_include_directories(fb_dump PRIVATE ${CMAKE_CURRENT_LIST_DIR}
                                           ${PROJECT_SOURCE_DIR}/sdk/include)
target_compile_options(fb_dump PRIVATE -fsanitize=address,undefined
                       -fno-sanitize-recover=all -fno-omit-frame-pointer)
target_link_options(fb_dump PRIVATE -fsanitize=address,undefined)

# Interop with implementations no one here wrote: Debian's flatc and
# python3-flatbuffers.
find_program(FLATC_EXECUTABLE flatc)
if(FLATC_EXECUTABLE)
  add_test(NAME flatbuf_crosscheck
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/crosscheck.sh
                   $<TARGET_FILE:fb_dump> ${FLATC_EXECUTABLE})
else()
  message(WARNING "flatc not found: the flatbuf_crosscheck test is skipped "
                  "(apt-get install flatbuffers-compiler python3-flatbuffers)")
endif()
