//! The skills the conformance suite's SEP-2640 scenarios read: a skill under a prefix with a
//! subdirectory (the first listed, whose root the directory scenario reads), a skill with
//! references, a script and a nested skill, and a generated one whose files are `"dynamic"`.

use wharf::skills::{SkillDef, Skills};

pub(crate) fn skills() -> Skills {
    let refunds = SkillDef::new("acme/billing/refunds")
        .file(
            "SKILL.md",
            "---\nname: refunds\ndescription: Process customer refund requests per company policy\n\
             license: Apache-2.0\nmetadata:\n  author: wharf\n  version: \"1.0\"\n---\n\n# Refunds\n\n\
             Check the order, then follow [the email template](examples/email.md).\n",
        )
        .file("examples/email.md", "Dear customer,\n\nYour refund is on its way.\n");
    let pdf = SkillDef::new("pdf-processing")
        .file(
            "SKILL.md",
            "---\nname: pdf-processing\ndescription: Extract text and tables from PDF files, and fill PDF forms\n\
             ---\n\n# PDF processing\n\nSee [the forms guide](references/FORMS.md); run `scripts/extract.py`.\n",
        )
        .file("references/FORMS.md", "# Forms\n\nFields are named by their labels.\n")
        .file("scripts/extract.py", "import sys\nprint(open(sys.argv[1], 'rb').read()[:4])\n")
        .file(
            "forms/filler/SKILL.md",
            "---\nname: filler\ndescription: Fill a PDF form field by field\n---\n\n# Filler\n",
        );
    let filler = SkillDef::new("pdf-processing/forms/filler")
        .file("SKILL.md", "---\nname: filler\ndescription: Fill a PDF form field by field\n---\n\n# Filler\n");
    let daily = SkillDef::generated(
        "reports/daily",
        "---\nname: daily\ndescription: Write the daily report from today's figures\n---\n\n# Daily report\n",
        || vec![("figures/today.json".to_owned(), br#"{"orders": 42}"#.to_vec())],
    );
    Skills::new().skill(refunds).skill(pdf).skill(filler).skill(daily)
}
