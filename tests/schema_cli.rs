//! `codecbus schema diff` in a process of its own, on snapshot files
//! written to a folder of the target directory: its output and exit status
//! for compatible sets, a break, JSON output, histories and bad input.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use codecbus::shape::{CodecShape, FieldShape, Layout, Record, Shape, ShapeSet};

/// A fresh folder for one test's files.
fn folder(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("schema_cli")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The codec `shop.order` with these fields (map layout).
fn order(fields: &[(&str, Shape, bool)]) -> ShapeSet {
    let fields = fields
        .iter()
        .map(|(name, shape, optional)| FieldShape {
            name: (*name).into(),
            key: None,
            optional: *optional,
            shape: shape.clone(),
        })
        .collect();
    ShapeSet::from_codecs([CodecShape {
        name: "shop.order".into(),
        aliases: vec![],
        shape: Shape::Record(Record::new(Layout::Map, fields, vec![])),
        refs: BTreeMap::new(),
    }])
}

fn v1() -> ShapeSet {
    order(&[("id", Shape::int(false, 64), false)])
}

fn v2() -> ShapeSet {
    order(&[
        ("id", Shape::int(false, 64), false),
        ("note", Shape::Option(Box::new(Shape::Str)), true),
    ])
}

/// `id` narrowed to u32.
fn narrowed() -> ShapeSet {
    order(&[("id", Shape::int(false, 32), false)])
}

fn write(dir: &Path, name: &str, set: &ShapeSet) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, set.to_snapshot()).unwrap();
    path
}

fn codecbus(args: &[&dyn AsRef<std::ffi::OsStr>]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_codecbus"))
        .args(args.iter().map(|a| a.as_ref()))
        .output()
        .expect("runs codecbus")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_compatible_change_exits_0() {
    let dir = folder("compatible");
    let old = write(&dir, "v1.json", &v1());
    let new = write(&dir, "v2.json", &v2());
    let o = codecbus(&[&"schema", &"diff", &old, &new, &"--mode", &"full"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(
        stdout(&o),
        "FULL: compatible, 1 codec checked against 1 snapshot\n"
    );
}

#[test]
fn a_break_exits_1_with_the_finding() {
    let dir = folder("break");
    let old = write(&dir, "v1.json", &v1());
    let new = write(&dir, "v2.json", &narrowed());
    let o = codecbus(&[&"schema", &"diff", &old, &new]);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(out.starts_with("BACKWARD: 1 incompatibility"), "{out}");
    assert!(
        out.contains("shop.order  id    INTEGER_NARROWED  backward"),
        "{out}"
    );
    assert!(out.contains("witness  {\"id\":4294967296}"), "{out}");
    // forward, the other way round, holds
    let o = codecbus(&[&"schema", &"diff", &old, &new, &"--mode=forward"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

#[test]
fn json_output_parses() {
    let dir = folder("json");
    let old = write(&dir, "v1.json", &v1());
    let new = write(&dir, "v2.json", &narrowed());
    let o = codecbus(&[
        &"schema",
        &"diff",
        &old,
        &new,
        &"--mode",
        &"full",
        &"--format",
        &"json",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(json["mode"], "FULL");
    assert_eq!(json["compatible"], false);
    let finding = &json["findings"][0];
    assert_eq!(finding["codec"], "shop.order");
    assert_eq!(finding["path"], "id");
    assert_eq!(finding["rule"], "INTEGER_NARROWED");
    assert_eq!(finding["direction"], "backward");
    assert_eq!(finding["witness"]["json"]["id"], 4_294_967_296u64);
    let o = codecbus(&[&"schema", &"diff", &old, &old, &"--format", &"json"]);
    assert_eq!(o.status.code(), Some(0));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(json["compatible"], true);
}

#[test]
fn transitive_modes_read_a_folder_of_snapshots() {
    let dir = folder("history");
    let history = dir.join("history");
    std::fs::create_dir(&history).unwrap();
    // v1 -> v2 adds `b` with a default; v3 drops the default: v2 writers
    // write `b`, v1 writers never did.
    let field = |b: Option<bool>| {
        let mut fields = vec![("a", Shape::int(false, 8), false)];
        if let Some(optional) = b {
            fields.push(("b", Shape::int(false, 8), optional));
        }
        order(&fields)
    };
    write(&history, "v1.json", &field(None));
    write(&history, "v2.json", &field(Some(true)));
    std::fs::write(history.join("notes.txt"), "not a snapshot").unwrap();
    let new = write(&dir, "v3.json", &field(Some(false)));
    let o = codecbus(&[&"schema", &"diff", &history, &new, &"--mode", &"backward"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let o = codecbus(&[
        &"schema",
        &"diff",
        &history,
        &new,
        &"--mode",
        &"backward-transitive",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let out = stdout(&o);
    assert!(out.contains("FIELD_ADDED_REQUIRED"), "{out}");
    assert!(out.contains("against  snapshot 0"), "{out}");
    assert!(
        out.contains(&format!(
            "snapshot 0: {}",
            history.join("v1.json").display()
        )),
        "{out}"
    );
}

#[test]
fn bad_input_exits_2_naming_the_file() {
    let dir = folder("bad");
    let old = write(&dir, "v1.json", &v1());
    let text = v2().to_snapshot();
    let cut = dir.join("cut.json");
    std::fs::write(&cut, &text[..text.len() / 2]).unwrap();
    let o = codecbus(&[&"schema", &"diff", &old, &cut]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    let name = cut.display().to_string();
    assert!(err.starts_with(&format!("codecbus: {name}:")), "{err}");
    let line: usize = err[format!("codecbus: {name}:").len()..]
        .split(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(line > 1, "{err}");
    assert!(err.contains("EOF while parsing"), "{err}");

    let newer = dir.join("newer.json");
    std::fs::write(&newer, text.replacen("\"format\": 1", "\"format\": 2", 1)).unwrap();
    let o = codecbus(&[&"schema", &"diff", &newer, &old]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        format!(
            "codecbus: {}: written by a newer codecbus (format 2, this one reads 1)\n",
            newer.display()
        )
    );

    let missing = dir.join("missing.json");
    let o = codecbus(&[&"schema", &"diff", &old, &missing]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(&missing.display().to_string()),
        "{}",
        stderr(&o)
    );
}

#[test]
fn usage_mistakes_exit_2() {
    let dir = folder("usage");
    let old = write(&dir, "v1.json", &v1());
    for (args, says) in [
        (vec!["schema", "diff"], "no snapshot given"),
        (vec!["schema", "merge"], "unknown command `schema merge`"),
        (
            vec!["schema", "diff", "--mode", "sideways", "a", "b"],
            "unknown mode `sideways`",
        ),
        (
            vec!["schema", "diff", "--format", "xml", "a", "b"],
            "unknown format `xml`",
        ),
        (vec!["schema", "diff", "--mode"], "--mode needs a value"),
        (
            vec!["schema", "diff", "--fast", "a", "b"],
            "unknown option `--fast`",
        ),
    ] {
        let args: Vec<&dyn AsRef<std::ffi::OsStr>> = args.iter().map(|a| a as _).collect();
        let o = codecbus(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}", args = stderr(&o));
        assert!(stderr(&o).contains(says), "{}", stderr(&o));
    }
    let o = codecbus(&[&"schema", &"diff", &old]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no OLD snapshot given"),
        "{}",
        stderr(&o)
    );
    let o = codecbus(&[&"--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).starts_with("usage: codecbus schema diff"));
}
