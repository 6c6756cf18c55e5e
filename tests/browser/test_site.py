"""The built site loads in a browser without reaching any other host."""


def test_smoothing_chapter_shows_its_figure_offline(page, site_url):
    page.goto(f"{site_url}/book/smoothing.html", wait_until="networkidle")
    figure = page.locator("#fig-smoothing-result img")
    assert figure.count() == 1
    assert figure.evaluate("img => img.complete && img.naturalWidth > 0")
    assert page.external_requests == []
