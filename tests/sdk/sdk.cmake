# The provider SDK's own calls (sdk/).  Included from tests/CMakeLists.txt,
# which defines CMOCKA_LIBRARY.
add_executable(test_sdk ${CMAKE_CURRENT_LIST_DIR}/test_sdk.c)
target_link_libraries(test_sdk PRIVATE cdnn_sdk ${CMOCKA_LIBRARY} Threads::Threads)
add_test(NAME sdk COMMAND test_sdk)
