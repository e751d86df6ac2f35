//! Compiles the C shim against the installed libfabric headers.
//! The shim loads libfabric with dlopen, so nothing links against it here.
fn main() {
    println!("cargo:rerun-if-changed=src/shim.c");
    if !std::path::Path::new("/usr/include/rdma/fabric.h").exists()
        && std::env::var_os("FABDIAG_LIBFABRIC_INCLUDE").is_none()
    {
        println!(
            "cargo:warning=libfabric headers not found in /usr/include/rdma; install libfabric-dev (scripts/install-deps.sh) or set FABDIAG_LIBFABRIC_INCLUDE"
        );
    }
    let mut build = cc::Build::new();
    build
        .file("src/shim.c")
        .warnings(true)
        .flag_if_supported("-Wno-unused-parameter");
    if let Some(inc) = std::env::var_os("FABDIAG_LIBFABRIC_INCLUDE") {
        build.include(inc);
    }
    build.compile("fabdiag_shim");
    println!("cargo:rustc-link-lib=dl");
}
