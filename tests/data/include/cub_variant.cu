// A CUB kernel whose variants (-DVARIANT=N) are distinct programs of about 0.2 MiB of outputs each
// (tests/integration/shim_eviction_test.cc).
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_radix_sort.cuh>
extern "C" __global__ void block_sum(const int* in, int* out) {
  using Reduce = cub::BlockReduce<int, 128>;
  __shared__ typename Reduce::TempStorage temp;
  int total = Reduce(temp).Sum(in[blockIdx.x * 128 + threadIdx.x] + VARIANT);
  if (threadIdx.x == 0) out[blockIdx.x] = total;
}
extern "C" __global__ void block_sort(int* keys) {
  using Sort = cub::BlockRadixSort<int, 128, 4>;
  __shared__ typename Sort::TempStorage temp;
  int items[4];
  for (int i = 0; i < 4; ++i) items[i] = keys[blockIdx.x * 512 + threadIdx.x * 4 + i] + VARIANT;
  Sort(temp).Sort(items);
  for (int i = 0; i < 4; ++i) keys[blockIdx.x * 512 + threadIdx.x * 4 + i] = items[i];
}
