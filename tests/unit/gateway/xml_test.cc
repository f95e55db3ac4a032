#include "orchestrator/gateway/xml.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace amt::gateway::xml {
namespace {

using ::testing::HasSubstr;

TEST(XmlWriterTest, EscapesTextAndClosesEveryElement) {
  Writer w("Root", "http://example.com/ns");
  w.Open("A").Leaf("B", "x<y & \"z\"").Open("C");
  EXPECT_EQ(std::move(w).Finish(),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Root xmlns=\"http://example.com/ns\">"
            "<A><B>x&lt;y &amp; &quot;z&quot;</B><C></C></A></Root>");
  EXPECT_EQ(Escape(std::string("a\x01"
                               "b",
                               3)),
            "a&#x1;b");
}

TEST(XmlParseTest, ReadsLocalNamesTextAndChildren) {
  const auto doc = Parse(
      "<?xml version=\"1.0\"?><s3:Delete xmlns:s3=\"urn:x\"><Object><Key>a &amp; b</Key>"
      "</Object><Object><Key>c</Key></Object><Quiet>true</Quiet></s3:Delete>");
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_EQ(doc->name, "Delete");
  ASSERT_EQ(doc->Children("Object").size(), 2u);
  EXPECT_EQ(doc->Children("Object")[0]->Child("Key")->text, "a & b");
  EXPECT_EQ(doc->Child("Quiet")->text, "true");
  EXPECT_EQ(doc->Child("Missing"), nullptr);
}

TEST(XmlParseTest, RefusesMalformedDeepAndEntityBombDocuments) {
  EXPECT_THAT(Parse("<a><b></a>").status().message(), HasSubstr("malformed XML at line 1"));
  EXPECT_THAT(Parse("").status().message(), HasSubstr("malformed XML"));
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "<a>";
  EXPECT_THAT(Parse(deep).status().message(), HasSubstr("nests deeper than 16"));
  std::string bomb = "<?xml version=\"1.0\"?><!DOCTYPE l [<!ENTITY a \"aaaaaaaaaa\">";
  std::string previous = "a";
  for (int i = 0; i < 9; ++i) {
    const std::string name(1, static_cast<char>('b' + i));
    bomb += "<!ENTITY " + name + " \"";
    for (int j = 0; j < 10; ++j) bomb += "&" + previous + ";";
    bomb += "\">";
    previous = name;
  }
  bomb += "]><l>&" + previous + ";</l>";
  EXPECT_FALSE(Parse(bomb).ok());  // expat's amplification limit, not 10^10 bytes of text
}

}  // namespace
}  // namespace amt::gateway::xml
