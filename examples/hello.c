/* hello.c -- the README's example: y = relu(a @ b), on the CPU or on the
 * device named by the first argument ("cuda:0"). */
#include <stdio.h>

#include <cdnn/cdnn.h>

#define CHECK(call)                                                          \
    do {                                                                     \
        cdnn_status_t st_ = (call);                                          \
        if (st_ != CDNN_STATUS_SUCCESS) {                                    \
            fprintf(stderr, "%s: %s\n", cdnn_status_string(st_),            \
                    cdnn_last_error());                                      \
            return 1;                                                        \
        }                                                                    \
    } while (0)

int main(int argc, char **argv)
{
    cdnn_handle_t *handle;
    cdnn_graph_t *graph;
    CHECK(cdnn_handle_create(&handle, argc > 1 ? argv[1] : "cpu"));
    CHECK(cdnn_graph_create(&graph));

    const int64_t a_dims[] = {2, 3}, b_dims[] = {3, 2};
    CHECK(cdnn_graph_tensor(graph, 1, "a", CDNN_DATA_TYPE_F32, 2, a_dims, NULL));
    CHECK(cdnn_graph_tensor(graph, 2, "b", CDNN_DATA_TYPE_F32, 2, b_dims, NULL));
    CHECK(cdnn_graph_tensor(graph, 3, "ab", CDNN_DATA_TYPE_F32, 0, NULL, NULL));
    CHECK(cdnn_graph_tensor(graph, 4, "y", CDNN_DATA_TYPE_F32, 0, NULL, NULL));
    CHECK(cdnn_graph_tensor_set_virtual(graph, 3)); /* never reaches memory */

    cdnn_pointwise_attr_t relu;
    cdnn_pointwise_attr_init(&relu, CDNN_PW_RELU_FWD);
    CHECK(cdnn_graph_matmul(graph, "matmul", 1, 2, 3));
    CHECK(cdnn_graph_pointwise(graph, "relu", &relu, 3, CDNN_UID_NONE,
                               CDNN_UID_NONE, 4));
    CHECK(cdnn_graph_build(graph, handle, NULL)); /* validate, pick an engine */

    /* Tensors live on the handle's device: host memory on the CPU, device
     * memory on a GPU, allocated and copied the same way on both. */
    const float a[] = {1, -2, 3, -4, 5, -6}, b[] = {1, 0, 0, 1, 1, 1};
    float y[4];
    void *a_dev, *b_dev, *y_dev, *workspace = NULL;
    size_t workspace_size;
    CHECK(cdnn_memory_alloc(handle, sizeof a, &a_dev));
    CHECK(cdnn_memory_alloc(handle, sizeof b, &b_dev));
    CHECK(cdnn_memory_alloc(handle, sizeof y, &y_dev));
    CHECK(cdnn_graph_workspace_size(graph, &workspace_size));
    if (workspace_size)
        CHECK(cdnn_memory_alloc(handle, workspace_size, &workspace));
    CHECK(cdnn_memory_upload(handle, a_dev, a, sizeof a));
    CHECK(cdnn_memory_upload(handle, b_dev, b, sizeof b));

    const int64_t uids[] = {1, 2, 4};
    void *ptrs[] = {a_dev, b_dev, y_dev};
    CHECK(cdnn_graph_execute(graph, handle, 3, uids, ptrs, workspace));
    CHECK(cdnn_memory_download(handle, y, y_dev, sizeof y)); /* waits for it */
    const char *engine;
    CHECK(cdnn_graph_engine(graph, NULL, &engine));
    printf("engine %s on %s: y = [[%g, %g], [%g, %g]]\n", engine,
           cdnn_handle_device(handle), y[0], y[1], y[2], y[3]);

    cdnn_graph_destroy(graph);
    cdnn_handle_destroy(handle);
    return 0;
}
