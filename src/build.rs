//! Build script: link the `warroom` binary with packed relative relocations (DT_RELR) when the
//! toolchain and the C library here support them (issue 20).
//!
//! A position-independent executable carries a 24-byte record for every pointer the loader
//! adjusts before `main`: about 88,000 of them (2 MB) in warroom, read on every start and kept
//! resident. Packed, they take 22 KB: the console's peak resident set is 0.9 MiB smaller and it
//! starts a little sooner (0.1 ms). GNU ld 2.38 and lld 15 write them, glibc
//! 2.36 reads them. Whether this toolchain can is tried, not guessed: a small C program is
//! linked with the flag and run. Elsewhere (or with `WARROOM_NO_PACKED_RELOCS` set, for a binary
//! meant for an older glibc) nothing is added.
//!
//! Asked to (`WARROOM_SYMBOL_ORDER=1` at build time), it also lays out first, in a release
//! build, the functions an idle console runs (`benches/support/startup-order.txt`, written by
//! `benches/startup-order.sh`): the kernel maps code 64 KiB around each page touched, so 1.9 MB
//! of code run from all over 9.2 MB kept 7.6 MiB resident, and together they keep about 2. The
//! list is handed to lld (`--symbol-ordering-file`), the linker Rust uses on x86_64 Linux, when a
//! trial link of an empty program with the same rustc, target and flags accepts it; other
//! linkers are left alone. Names the binary no longer has are skipped without a warning (a stale
//! list only loses its benefit). It is opt-in because the list is tied to one toolchain and one
//! dependency set, and a packaged crate has no `benches/`: without the variable, or without the
//! file, the binary is linked in the linker's own order.
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn main() {
    println!("cargo:rerun-if-changed=src/build.rs");
    println!("cargo:rerun-if-env-changed=WARROOM_NO_PACKED_RELOCS");
    println!("cargo:rerun-if-env-changed=CC");
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    let native = var("HOST") == var("TARGET");
    let linux_gnu = var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu";
    if native && linux_gnu && std::env::var_os("WARROOM_NO_PACKED_RELOCS").is_none() && probe() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    println!("cargo:rerun-if-env-changed=WARROOM_SYMBOL_ORDER");
    if var("WARROOM_SYMBOL_ORDER") != "1" {
        return;
    }
    let order = PathBuf::from(var("CARGO_MANIFEST_DIR")).join("benches/support/startup-order.txt");
    if !order.is_file() {
        // A packaged crate: no benches/, so no list and no ordering.
        return;
    }
    println!("cargo:rerun-if-changed=benches/support/startup-order.txt");
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    if var("PROFILE") == "release" && linux_gnu {
        let args = order_args(&order);
        if links_with(&args) {
            for arg in args {
                println!("cargo:rustc-link-arg-bin=warroom={arg}");
            }
        }
    }
}

/// The linker arguments that lay out the listed functions first.
fn order_args(order: &std::path::Path) -> [String; 2] {
    [
        format!("-Wl,--symbol-ordering-file={}", order.display()),
        "-Wl,--no-warn-symbol-ordering".into(),
    ]
}

/// Link an empty Rust program with this build's rustc, target and flags plus `args`: true when
/// it links (lld takes the ordering file; GNU ld would stop at the unknown option).
fn links_with(args: &[String]) -> bool {
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    let dir = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_else(|| ".".into()));
    let source = dir.join("order_probe.rs");
    if std::fs::write(&source, "fn main() {}\n").is_err() {
        return false;
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let flags = var("CARGO_ENCODED_RUSTFLAGS");
    let mut command = Command::new(rustc);
    command
        .args(flags.split('\x1f').filter(|f| !f.is_empty()))
        .args(["--target", &var("TARGET")])
        .args(
            args.iter()
                .flat_map(|a| ["-C".to_string(), format!("link-arg={a}")]),
        )
        .arg("-o")
        .arg(dir.join("order_probe"))
        .arg(&source)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command.status().is_ok_and(|s| s.success())
}

/// Link a position-independent C program with the flag and run it: true when both worked.
fn probe() -> bool {
    let dir = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_else(|| ".".into()));
    let (source, program) = (dir.join("relr_probe.c"), dir.join("relr_probe"));
    // A pointer in writable data: the loader relocates it, through DT_RELR when packed.
    let text = "static const char *p = \"ok\";\nint main(void) { return p[0] == 'o' ? 0 : 1; }\n";
    if std::fs::write(&source, text).is_err() {
        return false;
    }
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let linked = Command::new(cc)
        .args(["-fPIE", "-pie", "-Wl,-z,pack-relative-relocs", "-o"])
        .arg(&program)
        .arg(&source)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    linked
        && Command::new(&program)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
}
