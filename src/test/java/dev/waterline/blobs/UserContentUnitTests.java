package dev.waterline.blobs;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class UserContentUnitTests {

    @Test
    void anythingABrowserCouldRunOrRenderAsAPageIsServedAsOctetStream() {
        for (String active : new String[] {"text/html", "TEXT/HTML; charset=utf-8", "image/svg+xml", "application/xhtml+xml",
                "text/xml", "application/xml", "text/javascript", "application/javascript", "application/x-shockwave-flash",
                "multipart/x-mixed-replace; boundary=x", "text/html;x=\"image/png\"", "video/x-ms-asx+xml", "not a type", ""}) {
            assertThat(UserContent.servedAs(active).toString()).as(active).isEqualTo("application/octet-stream");
        }
    }

    @Test
    void passiveTypesAreServedAsRecordedWithOnlyATextsCharsetKept() {
        assertThat(UserContent.servedAs("image/png").toString()).isEqualTo("image/png");
        assertThat(UserContent.servedAs("IMAGE/JPEG; q=1").toString()).isEqualTo("image/jpeg");
        assertThat(UserContent.servedAs("text/plain; charset=ISO-8859-1").toString()).isEqualTo("text/plain;charset=ISO-8859-1");
        assertThat(UserContent.servedAs("text/plain; charset=no-such-charset").toString()).isEqualTo("text/plain");
        assertThat(UserContent.servedAs("video/mp4").toString()).isEqualTo("video/mp4");
        assertThat(UserContent.servedAs("application/pdf").toString()).isEqualTo("application/pdf");
    }

    @Test
    void oneRangeIsServedAndAnythingElseIsTheWholeFile() {
        assertThat(UserContent.range(null, 100)).isEqualTo(new UserContent.Ranged.Whole());
        assertThat(UserContent.range("bytes=0-9", 100)).isEqualTo(new UserContent.Ranged.Part(new UserContent.Range(0, 10)));
        assertThat(UserContent.range("bytes=90-", 100)).isEqualTo(new UserContent.Ranged.Part(new UserContent.Range(90, 100)));
        assertThat(UserContent.range("bytes=-5", 100)).isEqualTo(new UserContent.Ranged.Part(new UserContent.Range(95, 100)));
        assertThat(UserContent.range("bytes=-500", 100)).isEqualTo(new UserContent.Ranged.Part(new UserContent.Range(0, 100)));
        assertThat(UserContent.range("bytes=50-5000", 100)).isEqualTo(new UserContent.Ranged.Part(new UserContent.Range(50, 100)));
        assertThat(UserContent.range("bytes=100-", 100)).isEqualTo(new UserContent.Ranged.Unsatisfiable());
        assertThat(UserContent.range("bytes=0-0", 0)).isEqualTo(new UserContent.Ranged.Unsatisfiable());
        assertThat(UserContent.range("bytes=-0", 100)).as("an empty suffix").isEqualTo(new UserContent.Ranged.Unsatisfiable());
        assertThat(UserContent.range("bytes=-5", 0)).isEqualTo(new UserContent.Ranged.Unsatisfiable());
        for (String ignored : new String[] {"bytes=0-1,5-6", "items=0-1", "bytes=x-1", "bytes=5-1", "bytes=", "bytes=-", "bytes=+5-9",
                "bytes=5-+9", "bytes=-+5"}) {
            assertThat(UserContent.range(ignored, 100)).as(ignored).isEqualTo(new UserContent.Ranged.Whole());
        }
    }

    @Test
    void aFileNameInTheDispositionHeaderIsPrintableAsciiWithoutQuotes() {
        assertThat(UserContent.safeName("report \"final\".pdf")).isEqualTo("report _final_.pdf");
        assertThat(UserContent.safeName("naïve\r\nX-Evil: 1")).isEqualTo("na_ve__X-Evil: 1");
        assertThat(UserContent.safeName("")).isEqualTo("file");
    }
}
