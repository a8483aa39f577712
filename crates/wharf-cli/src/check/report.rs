//! What `wharf check` found: each check's outcome, grouped by section, printed as a table on a
//! terminal, as JSON, or as JUnit XML for CI.

use std::io::Write;
use std::time::Duration;

use serde::Serialize;

use crate::terminal_text::escaped;

/// How one check ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Outcome {
    Pass,
    /// Allowed, but worth a look.
    Warn,
    Fail,
    /// Not applicable, or not safe to run.
    Skip,
}

impl Outcome {
    fn label(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Warn => "warn",
            Outcome::Fail => "FAIL",
            Outcome::Skip => "skip",
        }
    }
}

/// One check.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Check {
    pub(crate) section: String,
    pub(crate) name: String,
    pub(crate) outcome: Outcome,
    pub(crate) detail: String,
    /// How long the request took, in milliseconds, when one was timed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) millis: Option<f64>,
}

/// Every check of a run.
#[derive(Debug, Default, Serialize)]
pub(crate) struct Report {
    pub(crate) server: String,
    pub(crate) checks: Vec<Check>,
}

impl Report {
    pub(crate) fn add(&mut self, section: &str, name: impl Into<String>, outcome: Outcome, detail: impl Into<String>) {
        self.checks.push(Check {
            section: section.to_owned(),
            name: name.into(),
            outcome,
            detail: detail.into(),
            millis: None,
        });
    }

    pub(crate) fn add_timed(
        &mut self,
        section: &str,
        name: impl Into<String>,
        outcome: Outcome,
        detail: impl Into<String>,
        took: Duration,
    ) {
        self.add(section, name, outcome, detail);
        if let Some(last) = self.checks.last_mut() {
            last.millis = Some(took.as_secs_f64() * 1000.0);
        }
    }

    pub(crate) fn count(&self, outcome: Outcome) -> usize {
        self.checks.iter().filter(|check| check.outcome == outcome).count()
    }

    pub(crate) fn failed(&self) -> bool {
        self.count(Outcome::Fail) > 0
    }

    pub(crate) fn summary(&self) -> String {
        format!(
            "{} passed, {} failed, {} warnings, {} skipped",
            self.count(Outcome::Pass),
            self.count(Outcome::Fail),
            self.count(Outcome::Warn),
            self.count(Outcome::Skip)
        )
    }

    /// A table per section, then the summary.
    pub(crate) fn print_table(&self, out: &mut impl Write) -> std::io::Result<()> {
        writeln!(out, "wharf check: {}", self.server)?;
        let mut section = "";
        for check in &self.checks {
            if check.section != section {
                section = &check.section;
                writeln!(out, "\n{section}")?;
            }
            let time = check.millis.map(|millis| format!(" ({millis:.1} ms)")).unwrap_or_default();
            // Names and details carry what the server sent: escaped, so it cannot drive a terminal.
            let detail = if check.detail.is_empty() { String::new() } else { format!(": {}", escaped(&check.detail)) };
            writeln!(out, "  {:<4}  {}{time}{detail}", check.outcome.label(), escaped(&check.name))?;
        }
        writeln!(out, "\n{}", self.summary())
    }

    pub(crate) fn print_json(&self, out: &mut impl Write) -> std::io::Result<()> {
        let summary = serde_json::json!({
            "passed": self.count(Outcome::Pass), "failed": self.count(Outcome::Fail),
            "warnings": self.count(Outcome::Warn), "skipped": self.count(Outcome::Skip),
        });
        let document = serde_json::json!({"server": self.server, "checks": self.checks, "summary": summary});
        writeln!(out, "{}", serde_json::to_string_pretty(&document).map_err(std::io::Error::other)?)
    }

    /// JUnit XML: a test suite per section, a test case per check; warnings pass with their
    /// detail in `system-out`.
    pub(crate) fn junit(&self) -> String {
        let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        xml.push_str(&format!(
            "<testsuites name=\"wharf check\" tests=\"{}\" failures=\"{}\" skipped=\"{}\">\n",
            self.checks.len(),
            self.count(Outcome::Fail),
            self.count(Outcome::Skip)
        ));
        let mut sections: Vec<&str> = Vec::new();
        for check in &self.checks {
            if !sections.contains(&check.section.as_str()) {
                sections.push(&check.section);
            }
        }
        for section in sections {
            let checks: Vec<&Check> = self.checks.iter().filter(|check| check.section == section).collect();
            let failures = checks.iter().filter(|check| check.outcome == Outcome::Fail).count();
            let skipped = checks.iter().filter(|check| check.outcome == Outcome::Skip).count();
            xml.push_str(&format!(
                "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" skipped=\"{skipped}\">\n",
                escape(section),
                checks.len()
            ));
            for check in checks {
                let time = check.millis.map(|millis| format!(" time=\"{:.3}\"", millis / 1000.0)).unwrap_or_default();
                xml.push_str(&format!(
                    "    <testcase classname=\"{}\" name=\"{}\"{time}>",
                    escape(section),
                    escape(&check.name)
                ));
                match check.outcome {
                    Outcome::Fail => xml.push_str(&format!("<failure message=\"{}\"/>", escape(&check.detail))),
                    Outcome::Skip => xml.push_str(&format!("<skipped message=\"{}\"/>", escape(&check.detail))),
                    Outcome::Warn => {
                        xml.push_str(&format!("<system-out>warning: {}</system-out>", escape(&check.detail)))
                    }
                    Outcome::Pass => {}
                }
                xml.push_str("</testcase>\n");
            }
            xml.push_str("  </testsuite>\n");
        }
        xml.push_str("</testsuites>\n");
        xml
    }
}

fn escape(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        .map(|c| match c {
            '&' => "&amp;".to_owned(),
            '<' => "&lt;".to_owned(),
            '>' => "&gt;".to_owned(),
            '"' => "&quot;".to_owned(),
            '\'' => "&apos;".to_owned(),
            c => c.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn junit_has_a_suite_per_section_and_escapes_details() {
        let mut report = Report { server: "x".to_owned(), checks: Vec::new() };
        report.add("lifecycle", "connect", Outcome::Pass, "");
        report.add("tools", "call <echo>", Outcome::Fail, "a \"bad\" answer & more");
        report.add("tools", "call danger", Outcome::Skip, "destructive");
        let xml = report.junit();
        assert!(xml.contains("<testsuite name=\"lifecycle\" tests=\"1\" failures=\"0\""), "{xml}");
        assert!(xml.contains("name=\"call &lt;echo&gt;\""), "{xml}");
        assert!(xml.contains("<failure message=\"a &quot;bad&quot; answer &amp; more\"/>"), "{xml}");
        assert!(xml.contains("<skipped message=\"destructive\"/>"));
        assert!(report.failed());
        assert_eq!(report.summary(), "1 passed, 1 failed, 0 warnings, 1 skipped");
    }

    #[test]
    fn the_table_escapes_what_the_server_named() {
        let mut report = Report { server: "x".to_owned(), checks: Vec::new() };
        report.add("tools", "evil\u{1b}]52;c;ZXZpbA==\u{7}: call", Outcome::Fail, "said \u{1b}[2J");
        let mut out = Vec::new();
        report.print_table(&mut out).unwrap();
        let table = String::from_utf8(out).unwrap();
        assert!(!table.contains('\u{1b}') && !table.contains('\u{7}'), "{table:?}");
        assert!(table.contains("evil\\u{1b}]52;c;ZXZpbA==\\u{7}: call: said \\u{1b}[2J"), "{table}");
    }
}
