// An allocator for large vectors that a program writes or reads through end to end, millions of
// elements at a time (a simulated day's arrivals, its requests' latencies): blocks of 2 MiB and
// more come straight from mmap, aligned to 2 MiB and advised MADV_HUGEPAGE, so the kernel backs
// them with huge pages: one page fault and one TLB entry per 2 MiB instead of 512. In a virtual
// machine, where a fault and a page walk cost the most, a 2,560-server simulated day took 16 %
// less (docs/polca.md, "What a simulated day costs"). Smaller blocks, and every block
// where the kernel gives no huge pages (transparent_hugepage=never), are ordinary memory.
// Stateless: any two compare equal, so vectors swap and move as with std::allocator.
#pragma once

#include <cstddef>
#include <memory>

namespace wattcut {

namespace huge_pages {
inline constexpr size_t kBytes = size_t{2} << 20;
// `bytes` (>= kBytes) from mmap, 2 MiB-aligned and advised for huge pages; throws std::bad_alloc.
void* Map(size_t bytes);
void Unmap(void* p, size_t bytes) noexcept;
}  // namespace huge_pages

template <typename T>
class HugePageAllocator {
 public:
  using value_type = T;

  HugePageAllocator() noexcept = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}  // NOLINT: converting, as std::allocator's

  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < huge_pages::kBytes) return std::allocator<T>().allocate(n);
    return static_cast<T*>(huge_pages::Map(bytes));
  }
  void deallocate(T* p, size_t n) noexcept {
    const size_t bytes = n * sizeof(T);
    if (bytes < huge_pages::kBytes) {
      std::allocator<T>().deallocate(p, n);
    } else {
      huge_pages::Unmap(p, bytes);
    }
  }

  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace wattcut
