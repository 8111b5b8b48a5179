#include <cstdio>

// What the operator injects into a pod (DESIGN.md, "Runtime"): see README.md.
int main() {
  return 0;
}
