//! Every `cargo` command the documents name points at a package and a
//! target that exist: `cargo run -p step05 --example lost_wake_up`, in the
//! README's table for a while, failed with "no example target named
//! `lost_wake_up`" (the example is `step05_lost_wake_up`), and no test
//! read the README's commands.
//!
//! The documents: every Markdown file in the repository but the pinned
//! diffs and the benchmarks' history of earlier rounds. What is checked:
//! `-p`/`--package`, `--example`, `--test`, `--bin` and `--bench`, against
//! `cargo metadata`; a name that is a placeholder (`stepNN`, `<name>`) is
//! passed over, and so is everything after `--`, which is the program's.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use book_tools::book::read_text;
use serde_json::Value;
use workshop_tests::workspace_root;

/// The flags that name a package or a target, and the kind of target each
/// names (`None`: the package).
const NAMING_FLAGS: [(&str, Option<&str>); 6] = [
    ("-p", None),
    ("--package", None),
    ("--example", Some("example")),
    ("--test", Some("test")),
    ("--bin", Some("bin")),
    ("--bench", Some("bench")),
];

/// Subcommands whose arguments are not this workspace's names.
const OTHER_NAMES: [&str; 2] = ["install", "binstall"];

/// A name a document gives: what flag, what name, and where.
#[derive(Debug)]
struct Named {
    flag: &'static str,
    kind: Option<&'static str>,
    package: Option<String>,
    name: String,
    place: String,
}

/// The workspace's packages, each with its targets as (kind, name).
struct Workspace {
    packages: Vec<(String, BTreeSet<(String, String)>)>,
}

impl Workspace {
    fn read(root: &Path) -> Workspace {
        let output =
            Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
                .args([
                    "metadata",
                    "--format-version",
                    "1",
                    "--no-deps",
                    "--offline",
                ])
                .current_dir(root)
                .output()
                .expect("cargo metadata runs");
        assert!(
            output.status.success(),
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let metadata: Value = serde_json::from_slice(&output.stdout).expect("JSON");
        let packages = metadata["packages"]
            .as_array()
            .expect("packages")
            .iter()
            .map(|package| {
                let targets = package["targets"]
                    .as_array()
                    .expect("targets")
                    .iter()
                    .flat_map(|target| {
                        let name =
                            target["name"].as_str().expect("name").to_string();
                        target["kind"].as_array().expect("kind").iter().map(
                            move |kind| {
                                (
                                    kind.as_str().expect("kind").to_string(),
                                    name.clone(),
                                )
                            },
                        )
                    })
                    .collect();
                (package["name"].as_str().expect("name").to_string(), targets)
            })
            .collect();
        Workspace { packages }
    }

    /// What is wrong with `named`, if anything.
    fn fault(&self, named: &Named) -> Option<String> {
        let Some(kind) = named.kind else {
            let known = self.packages.iter().any(|(name, _)| *name == named.name);
            return (!known).then(|| format!("no package named `{}`", named.name));
        };
        let in_package = |package: &str| {
            self.packages
                .iter()
                .filter(|(name, _)| name == package)
                .any(|(_, targets)| {
                    targets.contains(&(kind.to_string(), named.name.clone()))
                })
        };
        let found = match &named.package {
            Some(package) => in_package(package),
            None => self.packages.iter().any(|(package, _)| in_package(package)),
        };
        let whose = named
            .package
            .as_deref()
            .map_or_else(|| "in the workspace".to_string(), |p| format!("in `{p}`"));
        (!found).then(|| format!("no {kind} target named `{}` {whose}", named.name))
    }
}

/// A name a reader would replace rather than type: `stepNN`, `<name>`,
/// `N`, `fast_<file>`, `…`.
fn is_placeholder(name: &str) -> bool {
    !name.chars().all(|c| {
        c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-'
    }) || name.ends_with("nn")
}

/// The part of a line after `cargo ` that is the command: up to the end of
/// an inline code span, a shell comment, a pipe or the next command.
fn command_text(after_cargo: &str) -> &str {
    let end = after_cargo
        .find(['`', '#', '|', ';', '&', ')', '"'])
        .unwrap_or(after_cargo.len());
    &after_cargo[..end]
}

/// The names one command gives.
fn names_in(command: &str, place: &str) -> Vec<Named> {
    let words: Vec<&str> = command.split_whitespace().collect();
    if words.first().is_none_or(|sub| OTHER_NAMES.contains(sub)) {
        return Vec::new();
    }
    let words: Vec<&str> =
        words.into_iter().take_while(|word| *word != "--").collect();
    let package = words
        .windows(2)
        .find(|pair| pair[0] == "-p" || pair[0] == "--package")
        .map(|pair| pair[1].to_string())
        .filter(|name| !is_placeholder(name));
    words
        .windows(2)
        .filter_map(|pair| {
            let (flag, kind) =
                NAMING_FLAGS.iter().find(|(flag, _)| *flag == pair[0])?;
            let name = pair[1].trim_end_matches([',', '.', ':']);
            (!is_placeholder(name) && !name.starts_with('-')).then(|| Named {
                flag,
                kind: *kind,
                package: package.clone(),
                name: name.to_string(),
                place: place.to_string(),
            })
        })
        .collect()
}

/// Every Markdown file the command check reads.
fn documents(root: &Path) -> Vec<PathBuf> {
    let output = Command::new("git")
        .args(["ls-files", "-z", "--", "*.md"])
        .current_dir(root)
        .output();
    let listed: Vec<PathBuf> = match output {
        Ok(output) if output.status.success() => output
            .stdout
            .split(|byte| *byte == 0)
            .filter(|name| !name.is_empty())
            .map(|name| root.join(String::from_utf8_lossy(name).as_ref()))
            .collect(),
        // A ZIP download has no git: the documents that matter most.
        _ => ["README.md", "CONTRIBUTING.md"]
            .iter()
            .map(|name| root.join(name))
            .chain(markdown_in(&root.join("book/src")))
            .collect(),
    };
    listed
        .into_iter()
        .filter(|path| {
            let text = path.to_string_lossy().replace('\\', "/");
            !text.contains("/diffs/")
                && !text.ends_with("bench/RESULTS.md")
                && path.exists()
        })
        .collect()
}

fn markdown_in(folder: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect()
}

#[test]
fn every_cargo_command_in_the_documents_names_what_exists() {
    let root = workspace_root();
    let workspace = Workspace::read(&root);
    let mut named = Vec::new();
    for document in documents(&root) {
        let shown = document
            .strip_prefix(&root)
            .unwrap_or(&document)
            .display()
            .to_string();
        for (number, line) in read_text(&document).lines().enumerate() {
            for (at, _) in line.match_indices("cargo ") {
                let place = format!("{shown}:{}", number + 1);
                named.extend(names_in(command_text(&line[at + 6..]), &place));
            }
        }
    }
    assert!(
        named.iter().filter(|n| n.flag == "-p").count() > 50
            && named.iter().any(|n| n.flag == "--example")
            && named.iter().any(|n| n.flag == "--test"),
        "the documents' commands were not found where they are: {} names read",
        named.len()
    );
    let faults: Vec<String> = named
        .iter()
        .filter_map(|n| {
            workspace
                .fault(n)
                .map(|fault| format!("{}: {} {}: {fault}", n.place, n.flag, n.name))
        })
        .collect();
    assert!(
        faults.is_empty(),
        "commands in the documents that Cargo would refuse:\n{}",
        faults.join("\n")
    );
}

#[test]
fn a_command_s_names_are_read_as_cargo_reads_them() {
    let names = names_in(
        command_text("run -p step05 --example step05_lost_wake_up` prints"),
        "here",
    );
    let read: Vec<(&str, &str)> =
        names.iter().map(|n| (n.flag, n.name.as_str())).collect();
    assert_eq!(
        read,
        [("-p", "step05"), ("--example", "step05_lost_wake_up")]
    );
    assert_eq!(names[1].package.as_deref(), Some("step05"));

    let after_dashes =
        names_in("test -p workshop-tests --test shell -- --test x", "here");
    assert_eq!(after_dashes.len(), 2, "{after_dashes:?}");
    assert!(names_in("run -p stepNN", "here").is_empty());
    assert!(names_in("test -p <package>", "here").is_empty());
    assert!(names_in("install mdbook --bin mdbook", "here").is_empty());
    assert_eq!(command_text("run -p step03 # the demo"), "run -p step03 ");
}
