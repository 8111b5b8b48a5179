# Warnings are errors for the project's own code; dependencies' headers are included as system headers.
add_library(ipu_compile_options INTERFACE)
target_compile_options(ipu_compile_options INTERFACE -Wall -Wextra -Werror -Wpedantic -Wshadow
                                                     -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
                                                     -Woverloaded-virtual -Wformat=2
                                                     # g++ 12 flags designated initializers that leave members
                                                     # to their default member initializers, an idiom we use.
                                                     -Wno-missing-field-initializers)

if(IPU_SANITIZE)
  # One configuration for both: ASan finds memory errors, UBSan undefined behaviour; any report fails the test.
  set(sanitize_flags -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
  target_compile_options(ipu_compile_options INTERFACE ${sanitize_flags})
  target_link_options(ipu_compile_options INTERFACE ${sanitize_flags})
endif()
