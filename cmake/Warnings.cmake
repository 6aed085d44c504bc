# Warnings for our own targets only (not for third-party headers).
function(ctwin_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wno-unused-parameter)
endfunction()
