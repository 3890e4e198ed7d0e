//! The markers, and the functions found and blanked by them.

use super::*;

/// What to say when a marked function of `text` has braces that do not
/// pair up; `None` when each one ends where it should.
fn unbalanced(file: &str, text: &str) -> Option<String> {
    match scan(file, text) {
        Err(Problem::Unbalanced(said)) => Some(said),
        _ => None,
    }
}

const FILE: &str = "impl<T> Thing<T> {\n    \
    // BUILD 1/1: chapter 3, \"The code\"; test step03_a::b\n    \
    /// Docs with a } brace.\n    \
    pub fn call_at(\n        &self,\n        f: impl FnOnce() + 'static,\n    \
    ) {\n        let c = '}';\n        let s = \"{\";\n        \
    if true { f() }\n    }\n}\n";

#[test]
fn a_marker_finds_its_method_and_whole_body() {
    let found = markers_in("src/lib.rs", FILE).unwrap();
    assert_eq!(found.len(), 1);
    let marked = &found[0];
    assert_eq!(marked.function, "Thing::call_at");
    assert_eq!(marked.test, "step03_a::b");
    assert_eq!(marked.section, "The code");
    assert!(FILE[marked.body.clone()].ends_with("if true { f() }\n    }"));
}

#[test]
fn blanking_keeps_the_signature_and_says_where_to_read() {
    let found = markers_in("src/lib.rs", FILE).unwrap();
    let out = blanked(FILE, &[&found[0]]);
    assert!(out.contains(
        ") {\n        todo!(\"write `Thing::call_at`: see chapter 3, \
         section \\\"The code\\\"\")\n    }\n}\n"
    ));
    let again = markers_in("src/lib.rs", &out).unwrap();
    assert!(is_the_blank(&again[0], &out[again[0].body.clone()]));
    assert_eq!(
        again[0].doc, "Docs with a } brace.\n",
        "start keeps the doc"
    );
}

#[test]
fn a_marked_function_without_a_doc_comment_has_an_empty_doc() {
    let bare = "impl Ord for Timer {\n    \
        // BUILD 1/1: chapter 3, \"T\"; test a::b\n    \
        // ANCHOR: cmp\n    \
        #[inline]\n    \
        fn cmp(&self, other: &Self) -> Ordering {\n        \
        /// Not a doc comment: inside the body.\n        \
        todo!()\n    }\n}\n";
    let found = markers_in("src/lib.rs", bare).unwrap();
    assert_eq!(found[0].function, "Timer::cmp");
    assert_eq!(found[0].doc, "");
    let documented =
        bare.replace("#[inline]", "/// Orders.\n    ///\n    #[inline]");
    let found = markers_in("src/lib.rs", &documented).unwrap();
    assert_eq!(found[0].doc, "Orders.\n\n");
}

#[test]
fn impl_trait_returns_and_malformed_markers_are_refused() {
    let returns = "// BUILD 1/1: chapter 8, \"T\"; test a::b\n\
                   fn f() -> impl Future<Output = ()> {\n    async {}\n}\n";
    assert!(
        markers_in("x.rs", returns)
            .unwrap_err()
            .contains("impl Trait")
    );
    let bad = "// BUILD one: chapter 8\nfn f() {}\n";
    assert!(markers_in("x.rs", bad).is_err());
}

/// The blank `start` writes for the one function of `FILE`, and that
/// function's marker as found in `text`.
fn blank_and_marker(text_of: impl Fn(&str) -> String) -> (String, Marked) {
    let found = markers_in("src/lib.rs", FILE).unwrap();
    let blank = blanked(FILE, &[&found[0]]);
    let text = text_of(&blank);
    let marked = markers_in("src/lib.rs", &text).unwrap().remove(0);
    (text, marked)
}

#[test]
fn only_the_exact_blank_is_blank_and_formatting_changes_nothing() {
    let (text, marked) =
        blank_and_marker(|blank| blank.replace("    todo!", "todo!"));
    let body = &text[marked.body.clone()];
    assert!(is_the_blank(&marked, body), "{body}");
    assert!(is_unfinished(&marked, body));
    let (text, marked) =
        blank_and_marker(|blank| blank.replace("todo!(", "let x = 1;\n todo!("));
    let body = &text[marked.body.clone()];
    assert!(
        !is_the_blank(&marked, body),
        "a line written above the todo!()"
    );
    assert!(is_unfinished(&marked, body));
}

#[test]
fn work_with_a_todo_left_for_later_is_unfinished_work() {
    let half = "{\n        match x {\n            1 => f(),\n                                _ => todo!(\"later\"),\n        }\n    }";
    let (text, marked) = blank_and_marker(|blank| {
        let found = markers_in("src/lib.rs", blank).unwrap();
        let mut text = blank.to_owned();
        text.replace_range(found[0].body.clone(), half);
        text
    });
    let body = &text[marked.body.clone()];
    assert!(!is_the_blank(&marked, body));
    assert!(is_unfinished(&marked, body));
}

#[test]
fn a_todo_in_a_comment_or_a_string_is_not_unfinished() {
    let found = markers_in("src/lib.rs", FILE).unwrap();
    for body in [
        "{\n        // was a todo!() until I wrote it\n        f()\n    }",
        "{\n        /* the todo!( is gone */ f()\n    }",
        "{\n        println!(\"no todo!( here \\\" still\");\n    }",
    ] {
        assert!(!is_unfinished(&found[0], body), "{body}");
    }
}

/// Two marked methods, the first with `body` for its body.
fn two_methods(body: &str) -> String {
    format!(
        "impl EventLoop {{\n    \
         // BUILD 1/2: chapter 3, \"T\"; test a::b\n    \
         /// Schedules.\n    \
         pub fn call_at<'a>(&'a mut self, sequence: u64) {body}\n\n    \
         // BUILD 2/2: chapter 3, \"T\"; test a::c\n    \
         pub fn run(&mut self) {{\n        self.turn();\n    }}\n\n    \
         fn turn(&mut self) {{}}\n}}\n"
    )
}

#[test]
fn braces_in_block_comments_raw_strings_and_literals_are_not_the_codes() {
    for body in [
        "{\n        /* first try: if x { */\n        self.push(sequence);\n    }",
        "{\n        /* outer /* nested { */ still a comment { */\n        f();\n    }",
        "{\n        let s = r#\"a \"{\" quote\"#;\n        f(s);\n    }",
        "{\n        let b = b\"{\";\n        let c = b'{';\n        f(b, c);\n    }",
        "{\n        let c = '{';\n        let r: &'a str = \"}\";\n        f(c, r);\n    }",
    ] {
        let text = two_methods(body);
        let found = markers_in("src/lib.rs", &text).expect(body);
        assert_eq!(found.len(), 2, "{body}");
        assert_eq!(&text[found[0].body.clone()], body);
        assert_eq!(found[1].function, "EventLoop::run");
        assert!(!is_unfinished(&found[0], body), "{body}");
        assert_eq!(found[0].fn_line(&text), 4);
    }
}

#[test]
fn a_half_typed_body_is_refused_by_name_never_cut() {
    let half =
        "{\n        if sequence > 0 {\n            self.push(sequence);\n    }";
    let text = two_methods(half);
    let said = unbalanced("src/lib.rs", &text).expect("an open `{` is named");
    assert!(
        said.contains("`EventLoop::call_at` (src/lib.rs:4)"),
        "{said}"
    );
    assert!(markers_in("src/lib.rs", &text).is_err());
    // The last marked function, with no marker below it to swallow: its
    // body would end at the `impl`'s `}`.
    let last = two_methods("{\n        f();\n    }").replace(
        "pub fn run(&mut self) {\n        self.turn();\n    }",
        "pub fn run(&mut self) {\n        if x {\n    }",
    );
    let said = unbalanced("src/lib.rs", &last).expect("the last one too");
    assert!(said.contains("`EventLoop::run`"), "{said}");
    // A free function that would run on into the next one.
    let free = "// BUILD 1/1: chapter 5, \"T\"; test a::b\n\
                pub fn spawn() {\n    if x {\n}\n\npub fn other() {\n    y();\n}\n";
    let said = unbalanced("src/lib.rs", free).expect("a free function too");
    assert!(said.contains("`spawn`"), "{said}");
    assert_eq!(
        unbalanced("src/lib.rs", &two_methods("{\n        f();\n    }")),
        None
    );
}

#[test]
fn a_marker_line_inside_a_string_or_a_block_comment_is_no_marker() {
    let text = "/*\n// BUILD 1/1: chapter 3, \"T\"; test a::b\nfn f() {}\n*/\n\
                const S: &str = \"\n// BUILD 1/1: chapter 3, \\\"T\\\"; test a::b\n\";\n";
    assert_eq!(markers_in("src/lib_old.rs", text).unwrap(), Vec::new());
}

#[test]
fn a_section_with_quotes_and_braces_still_blanks_to_one_literal() {
    let odd = FILE.replace("\"The code\"", "\"Say \"hi\" { \\\"");
    let found = markers_in("src/lib.rs", &odd).unwrap();
    assert_eq!(found[0].section, "Say \"hi\" { \\");
    let out = blanked(&odd, &[&found[0]]);
    let again =
        markers_in("src/lib.rs", &out).expect("the same function, found again");
    assert_eq!(again[0].function, "Thing::call_at");
    assert!(is_the_blank(&again[0], &out[again[0].body.clone()]));
}
