# The op suite: every op family on every fast CPU engine, compared with
# cpu:reference.  Included from tests/CMakeLists.txt.
add_executable(test_ops
  ${CMAKE_CURRENT_LIST_DIR}/test_ops.c
  ${CMAKE_CURRENT_LIST_DIR}/ops/harness.c
  ${CMAKE_CURRENT_LIST_DIR}/ops/conv.c
  ${CMAKE_CURRENT_LIST_DIR}/ops/matmul.c
  ${CMAKE_CURRENT_LIST_DIR}/ops/pointwise.c
  ${CMAKE_CURRENT_LIST_DIR}/ops/reduction.c
  ${CMAKE_CURRENT_LIST_DIR}/ops/norm.c
  ${CMAKE_CURRENT_LIST_DIR}/ops/sdpa.c
  ${CMAKE_CURRENT_LIST_DIR}/ops/softmax.c
  ${CMAKE_CURRENT_LIST_DIR}/ops/movement.c
  ${CMAKE_CURRENT_LIST_DIR}/ops/index.c
  ${CMAKE_CURRENT_LIST_DIR}/ops/pool.c
  ${CMAKE_CURRENT_LIST_DIR}/ops/fused.c
  ${CMAKE_CURRENT_LIST_DIR}/ops/threads.c)
target_include_directories(test_ops PRIVATE ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(test_ops PRIVATE cdnn ${CMOCKA_LIBRARY} Threads::Threads m)
# The matmul family checks which engine the shipped f16 example gets.
target_compile_definitions(test_ops PRIVATE
  CDNN_EXAMPLES_DIR="${PROJECT_SOURCE_DIR}/examples")
# The tests load the CPU provider that libcdnn.so finds beside itself.
add_dependencies(test_ops cdnn_provider_cpu)
add_test(NAME ops COMMAND test_ops)
set_tests_properties(ops PROPERTIES TIMEOUT 900)
