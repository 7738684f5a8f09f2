"""bench/gpu/cdnn_plan.py -- a saved cdnn plan run from Python, on PyTorch's stream.

The GPU benches compare cdnn with PyTorch.  Timed in two processes, the two
sides see the chip in different states: its clock drifts between runs and
falls under sustained tensor-core load, by more than the few percent the
comparisons turn on.  Loaded here, a plan that bench_gpu_plans built (with
benchmarking) and saved executes in the process that runs PyTorch, on
PyTorch's current stream, on tensors PyTorch allocated, so that cdnn and
its peers can be timed in alternation and their outputs compared.

    plan = LoadedPlan(handle, path)     # cdnn_plan_load: no selection, no build
    run = plan.bind({1: x, 2: w, 9: y}) # tensors by uid (sizes checked)
    run()                               # one execution, enqueued

Only what that needs of cdnn.h is declared here (ctypes).
"""
import ctypes
import os

MAX_TENSORS = 16


class TensorIO(ctypes.Structure):
    """cdnn_tensor_io_t"""
    _fields_ = [("uid", ctypes.c_int64), ("type", ctypes.c_int), ("span_bytes", ctypes.c_size_t),
                ("alignment", ctypes.c_int64), ("is_output", ctypes.c_int32)]


class CdnnError(RuntimeError):
    pass


def open_library(path):
    """libcdnn at path, its functions' signatures declared."""
    lib = ctypes.CDLL(os.path.abspath(path))
    p, i32, sz = ctypes.c_void_p, ctypes.c_int32, ctypes.c_size_t
    signatures = {
        "cdnn_handle_create": [ctypes.POINTER(p), ctypes.c_char_p],
        "cdnn_handle_set_stream": [p, p],
        "cdnn_handle_synchronize": [p],
        "cdnn_plan_load": [ctypes.POINTER(p), p, ctypes.c_char_p, sz],
        "cdnn_graph_io_tensors": [p, ctypes.POINTER(TensorIO), i32, ctypes.POINTER(i32)],
        "cdnn_graph_workspace_size": [p, ctypes.POINTER(sz)],
        "cdnn_graph_execute": [p, p, i32, ctypes.POINTER(ctypes.c_int64),
                               ctypes.POINTER(p), p],
    }
    for name, args in signatures.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = args, ctypes.c_int
    lib.cdnn_last_error.restype = ctypes.c_char_p
    for name in ("cdnn_graph_destroy", "cdnn_handle_destroy"):
        getattr(lib, name).argtypes, getattr(lib, name).restype = [p], None
    return lib


def check(lib, status, what):
    if status != 0:
        raise CdnnError(f"{what} failed (status {status}): "
                        f"{lib.cdnn_last_error().decode(errors='replace')}")


class Handle:
    """A handle on device ("cuda:0", or "cpu" with stream 0) whose executions
    go on the stream given (an int, as torch.cuda.current_stream().cuda_stream
    gives it)."""

    def __init__(self, lib, stream, device="cuda:0"):
        self.lib = lib
        self.handle = ctypes.c_void_p()
        check(lib, lib.cdnn_handle_create(ctypes.byref(self.handle), device.encode()),
              f"cdnn_handle_create({device})")
        self.set_stream(stream)

    def set_stream(self, stream):
        """Executions from now on go on stream (an int)."""
        check(self.lib, self.lib.cdnn_handle_set_stream(self.handle, ctypes.c_void_p(stream)),
              "cdnn_handle_set_stream")

    def close(self):
        self.lib.cdnn_handle_destroy(self.handle)


class LoadedPlan:
    """A plan loaded from its saved bytes on handle; call it to execute."""

    def __init__(self, handle, path):
        self.lib, self.handle = handle.lib, handle.handle
        with open(path, "rb") as f:
            data = f.read()
        self.graph = ctypes.c_void_p()
        check(self.lib, self.lib.cdnn_plan_load(ctypes.byref(self.graph), self.handle, data,
                                                len(data)), f"cdnn_plan_load({path})")
        ios = (TensorIO * MAX_TENSORS)()
        count = ctypes.c_int32()
        check(self.lib, self.lib.cdnn_graph_io_tensors(self.graph, ios, MAX_TENSORS,
                                                       ctypes.byref(count)),
              "cdnn_graph_io_tensors")
        if count.value > MAX_TENSORS:
            raise CdnnError(f"the plan has {count.value} tensors; this binding takes "
                            f"{MAX_TENSORS}")
        self.tensors = {ios[i].uid: ios[i] for i in range(count.value)}
        workspace = ctypes.c_size_t()
        check(self.lib, self.lib.cdnn_graph_workspace_size(self.graph, ctypes.byref(workspace)),
              "cdnn_graph_workspace_size")
        self.workspace_bytes = workspace.value

    def bind(self, by_uid, workspace_ptr=0):
        """A function that executes the plan on these device tensors (torch
        tensors by uid: every tensor the plan reads or writes, each spanning
        the bytes it needs).  One plan binds to several sets of tensors."""
        missing = sorted(set(self.tensors) - set(by_uid))
        if missing:
            raise CdnnError(f"the plan needs tensors {missing} too")
        for uid, io in self.tensors.items():
            t = by_uid[uid]
            storage = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
            span = storage.nbytes() - t.storage_offset() * t.element_size()
            if span < io.span_bytes:
                raise CdnnError(f"tensor {uid} spans {span} bytes; the plan reads or writes "
                                f"{io.span_bytes}")
        uids = list(self.tensors)
        n = len(uids)
        args = (self.graph, self.handle, n, (ctypes.c_int64 * n)(*uids),
                (ctypes.c_void_p * n)(*(by_uid[u].data_ptr() for u in uids)),
                ctypes.c_void_p(workspace_ptr))
        execute, lib = self.lib.cdnn_graph_execute, self.lib
        return lambda: check(lib, execute(*args), "cdnn_graph_execute")

    def close(self):
        self.lib.cdnn_graph_destroy(self.graph)
