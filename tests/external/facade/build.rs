//! Extracts every ```rust code block of the repository's README into
//! `$OUT_DIR`, as modules the tests include: `readme_blocks.rs` (blocks that
//! run in process) and `readme_nats_blocks.rs` (`rust,no_run` blocks, which
//! need a NATS server).

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    let readme =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("../../../README.md");
    println!("cargo::rerun-if-changed={}", readme.display());
    let text = std::fs::read_to_string(&readme)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", readme.display()));
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());

    let mut local = String::new();
    let mut nats = String::new();
    let mut nats_runs = String::new();
    let mut lines = text.lines().enumerate();
    let mut blocks = 0;
    while let Some((n, line)) = lines.next() {
        let Some(info) = line.strip_prefix("```") else {
            continue;
        };
        let is_rust = info.split(',').next() == Some("rust");
        let mut code = String::new();
        for (_, line) in lines.by_ref() {
            if line.starts_with("```") {
                break;
            }
            code.push_str(line);
            code.push('\n');
        }
        if !is_rust {
            continue;
        }
        assert!(
            code.contains("fn main("),
            "README.md line {}: a Rust block must be a complete program (with `fn main`)",
            n + 1
        );
        blocks += 1;
        let line_no = n + 1;
        let file = out.join(format!("readme_line_{line_no}.rs"));
        let code = code
            .replacen("async fn main(", "pub async fn main(", 1)
            .replacen("\nfn main(", "\npub fn main(", 1);
        std::fs::write(&file, code).unwrap();
        let module = format!(
            "#[allow(dead_code)]\nmod readme_line_{line_no} {{\n    include!({file:?});\n}}\n"
        );
        let run = format!(
            "facade_user::Outcome::check(readme_line_{line_no}::main(), \"README.md line {line_no}\");"
        );
        if info.contains("no_run") {
            nats.push_str(&module);
            writeln!(nats_runs, "    {run}").unwrap();
        } else {
            local.push_str(&module);
            writeln!(
                local,
                "#[test]\nfn readme_line_{line_no}() {{\n    {run}\n}}\n"
            )
            .unwrap();
        }
    }
    let nats_count = nats_runs.lines().count();
    writeln!(
        nats,
        "/// How many `no_run` blocks there are.\npub(crate) const COUNT: usize = {nats_count};\n\
         /// Runs every `no_run` block, in order.\npub(crate) fn run_all() {{\n{nats_runs}}}"
    )
    .unwrap();
    assert!(
        blocks >= 5,
        "only {blocks} Rust blocks found in {}",
        readme.display()
    );
    std::fs::write(out.join("readme_blocks.rs"), local).unwrap();
    std::fs::write(out.join("readme_nats_blocks.rs"), nats).unwrap();
}
