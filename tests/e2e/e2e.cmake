# Two small networks end to end (a ResNet basic block and a pre-LN
# transformer block), each layer group one cdnn graph, forward and
# backward, against PyTorch's autograd on the same weights.  Skipped (exit
# 77) where /usr/bin/python3 has no PyTorch.
add_test(NAME e2e_networks_vs_torch
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/test_e2e_torch.py
          $<TARGET_FILE:cdnn>)
set_tests_properties(e2e_networks_vs_torch PROPERTIES
  LABELS python SKIP_RETURN_CODE 77)
