# Forged but correctly re-sealed plans and containers (issue 8): forge.py
# writes them, run_forgeries loads each one and runs whatever loads with
# buffers of exactly the sizes the plan declares.  Included from
# tests/CMakeLists.txt.
#
# Labelled "security", not "python": the python part (forge.py) loads no
# library, so the test runs under ASan+UBSan in `make test-asan` too, where
# an overrun of a declared buffer is a sanitizer report.  Without
# python3-flatbuffers the test is skipped (exit 77) and says why.
find_package(PkgConfig REQUIRED)
pkg_check_modules(SECURITY_JANSSON REQUIRED IMPORTED_TARGET jansson)

add_executable(run_forgeries ${CMAKE_CURRENT_LIST_DIR}/run_forgeries.c)
target_link_libraries(run_forgeries PRIVATE cdnn PkgConfig::SECURITY_JANSSON)
add_dependencies(run_forgeries cdnn_provider_cpu cdnn_cli cdnn_provider_kernels host_kernels)

add_test(NAME security_forgeries
  COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_forgeries.sh
          $<TARGET_FILE:cdnn_cli> $<TARGET_FILE:run_forgeries> ${PROJECT_SOURCE_DIR})
set_tests_properties(security_forgeries PROPERTIES
  LABELS security SKIP_RETURN_CODE 77 TIMEOUT 1800)
