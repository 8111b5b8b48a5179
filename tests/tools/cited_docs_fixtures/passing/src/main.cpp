// The design: docs/architecture.md, "Layers"; how to build: README.md (or ../README.md from here).
int main() {
  return 0;
}
