"""The docs' numbers and tables from the committed results: ``claims`` checks
every number a page states against the CSVs, ``tables`` puts the tables the
figure scripts wrote (plots/out) into the README and the pages of docs/."""
