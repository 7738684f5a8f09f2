# Kernel packs (<cdnn_sdk/kpack.h>, `cdnn pack`).  Included from
# tests/CMakeLists.txt, which defines CMOCKA_LIBRARY.

# The SDK's reader and writer: round trip, every check alone, rule 4.
add_executable(test_kpack ${CMAKE_CURRENT_LIST_DIR}/test_kpack.c)
target_link_libraries(test_kpack PRIVATE cdnn_sdk ${CMOCKA_LIBRARY} Threads::Threads)
add_test(NAME kpack COMMAND test_kpack)

# `cdnn pack build/list/verify` on small descriptors and dummy code objects
# (tests/kpack/descriptors), hostile descriptors included.
add_test(NAME kpack_cli COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_kpack_cli.sh
         $<TARGET_FILE:cdnn_cli> ${CMAKE_CURRENT_LIST_DIR}/descriptors)

# The pack's bytes read by implementations no one here wrote: the header by
# python's struct and hashlib, the TOC by flatc's generated python classes
# and by `flatc --json`; and a pack laid out by python3-flatbuffers'
# Builder, which cdnn must read alike.  Skipped (77) without them.
add_test(NAME kpack_flatc
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/test_kpack_flatc.py
          $<TARGET_FILE:cdnn_cli> ${PROJECT_SOURCE_DIR}/schema
          ${CMAKE_CURRENT_LIST_DIR}/descriptors)
set_tests_properties(kpack_flatc PROPERTIES SKIP_RETURN_CODE 77)

# The N-th allocation fails, for every N, while packs are opened (from bytes
# and files), walked, re-checked on disk and written: ALLOC_FAILED each
# time, nothing leaked.  --wrap reaches the allocations of the SDK's
# archive members linked into the test too.
add_executable(test_kpack_oom ${CMAKE_CURRENT_LIST_DIR}/test_kpack_oom.c)
target_link_libraries(test_kpack_oom PRIVATE cdnn_sdk)
target_link_options(test_kpack_oom PRIVATE
  -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=free)
add_test(NAME kpack_oom COMMAND test_kpack_oom)
