"""Reading approved specifications that are not Markdown: a PDF's pages (`readpages`)."""
