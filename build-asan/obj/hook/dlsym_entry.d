build-asan/obj/hook/dlsym_entry.o: src/hook/dlsym_entry.S
