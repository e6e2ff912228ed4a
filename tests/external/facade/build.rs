//! Extracts every ```rust code block of the repository's README and of each
//! chapter of its guide (`book/src/*.md`) into `$OUT_DIR`, as modules the
//! tests include: `readme_blocks.rs` (blocks that run in process, one test
//! each, named after the file and line), `readme_nats_blocks.rs`
//! (`rust,no_run` blocks, which need a NATS server) and
//! `guide_compile_fail.rs` (`rust,compile_fail` blocks, a mistake the
//! compiler must refuse, each a `compile_fail` doctest of the library).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The extracted blocks so far.
#[derive(Default)]
struct Blocks {
    /// Modules and tests of the in-process blocks.
    local: String,
    /// Modules of the `no_run` blocks.
    nats: String,
    /// One call per `no_run` block.
    nats_runs: String,
    /// One documented item per `compile_fail` block, for rustdoc.
    compile_fail: String,
}

/// Extracts the Rust blocks of `path`, shown in messages as `shown`, each
/// module named `{stem}_line_{n}`; returns how many there were.
fn extract(path: &Path, shown: &str, stem: &str, out: &Path, blocks: &mut Blocks) -> usize {
    println!("cargo::rerun-if-changed={}", path.display());
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut count = 0;
    let mut lines = text.lines().enumerate();
    while let Some((n, line)) = lines.next() {
        let Some(info) = line.strip_prefix("```") else {
            continue;
        };
        let line_no = n + 1;
        // `rust,ignore`: a block that cannot run here (a test file of a
        // user's crate, shown whole); every other Rust block runs.
        let is_rust = info.split(',').next() == Some("rust") && !info.contains("ignore");
        let mut code = String::new();
        let mut closed = false;
        for (_, line) in lines.by_ref() {
            if line.starts_with("```") {
                closed = true;
                break;
            }
            code.push_str(line);
            code.push('\n');
        }
        assert!(
            closed,
            "{shown} line {line_no}: a code block is never closed"
        );
        if !is_rust {
            continue;
        }
        assert!(
            code.contains("fn main("),
            "{shown} line {line_no}: a Rust block must be a complete program (with `fn main`)"
        );
        count += 1;
        let name = format!("{stem}_line_{line_no}");
        if let Some(codes) = info.strip_prefix("rust,compile_fail") {
            // `rust,compile_fail,E0277`: rustdoc checks the error code too.
            writeln!(blocks.compile_fail, "/// {shown} line {line_no}:\n///").unwrap();
            writeln!(blocks.compile_fail, "/// ```compile_fail{codes}").unwrap();
            for line in code.lines() {
                writeln!(blocks.compile_fail, "/// {line}").unwrap();
            }
            writeln!(blocks.compile_fail, "/// ```\npub struct {name};\n").unwrap();
            continue;
        }
        let file = out.join(format!("{name}.rs"));
        let code = code
            .replacen("async fn main(", "pub async fn main(", 1)
            .replacen("\nfn main(", "\npub fn main(", 1);
        std::fs::write(&file, code).unwrap();
        let module = format!("#[allow(dead_code)]\nmod {name} {{\n    include!({file:?});\n}}\n");
        let run =
            format!("facade_user::Outcome::check({name}::main(), \"{shown} line {line_no}\");");
        if info.contains("no_run") {
            blocks.nats.push_str(&module);
            writeln!(blocks.nats_runs, "    {run}").unwrap();
        } else {
            blocks.local.push_str(&module);
            writeln!(blocks.local, "#[test]\nfn {name}() {{\n    {run}\n}}\n").unwrap();
        }
    }
    count
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("../../..");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let mut blocks = Blocks::default();

    let readme = extract(
        &root.join("README.md"),
        "README.md",
        "readme",
        &out,
        &mut blocks,
    );
    assert!(readme >= 1, "no Rust block found in README.md");

    let book = root.join("book/src");
    println!("cargo::rerun-if-changed={}", book.display());
    let mut chapters: Vec<PathBuf> = std::fs::read_dir(&book)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", book.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    chapters.sort();
    let mut in_book = 0;
    for chapter in &chapters {
        let stem = chapter.file_stem().unwrap().to_str().unwrap();
        let shown = format!("book/src/{stem}.md");
        in_book += extract(chapter, &shown, &format!("book_{stem}"), &out, &mut blocks);
    }
    assert!(
        in_book >= 10,
        "only {in_book} Rust blocks found in {}",
        book.display()
    );

    let nats_count = blocks.nats_runs.lines().count();
    writeln!(
        blocks.nats,
        "/// How many `no_run` blocks there are.\npub(crate) const COUNT: usize = {nats_count};\n\
         /// Runs every `no_run` block, in order.\npub(crate) fn run_all() {{\n{}}}",
        blocks.nats_runs
    )
    .unwrap();
    std::fs::write(out.join("readme_blocks.rs"), blocks.local).unwrap();
    std::fs::write(out.join("readme_nats_blocks.rs"), blocks.nats).unwrap();
    std::fs::write(out.join("guide_compile_fail.rs"), blocks.compile_fail).unwrap();
}
