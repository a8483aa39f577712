//! `include_view!`: a view's directory inlined into one document at build time (the fixture is
//! `tests/views/counter`: an `index.html` linking a style sheet and two scripts of its own, and
//! one style sheet of another origin, which stays a link).

const COUNTER: &str = wharf::include_view!("tests/views/counter");

#[test]
fn local_scripts_and_style_sheets_are_inlined_and_remote_links_stay() {
    assert!(COUNTER.contains("<style>#count { font-size: 40px; }\n</style>"), "{COUNTER}");
    assert!(COUNTER.contains("<script>window.count = (n) => String(n);\n</script>"), "{COUNTER}");
    assert!(COUNTER.contains("<script type=\"module\">document.getElementById"), "{COUNTER}");
    assert!(COUNTER.contains(r#""<\/script>" stays inside"#), "a script cannot end its element early: {COUNTER}");
    assert!(COUNTER.contains(r#"<link rel="stylesheet" href="https://cdn.example.com/remote.css">"#), "{COUNTER}");
    for linked in ["href=\"style.css\"", "src=\"lib/count.js\"", "src='app.js'"] {
        assert!(!COUNTER.contains(linked), "{linked} left in {COUNTER}");
    }
}
