package esqlog.shim;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.Tokenizer;
import org.apache.lucene.analysis.email.UAX29URLEmailTokenizer;
import org.apache.lucene.analysis.miscellaneous.RemoveDuplicatesTokenFilter;
import org.apache.lucene.analysis.pattern.PatternCaptureGroupTokenFilter;
import org.elasticsearch.index.analysis.TokenFilterFactory;
import org.elasticsearch.index.analysis.TokenizerFactory;
import org.elasticsearch.indices.analysis.AnalysisModule.AnalysisProvider;
import org.elasticsearch.plugins.AnalysisPlugin;
import org.elasticsearch.plugins.Plugin;

/**
 * The three analysis components the security index mapping needs (pattern_capture, unique,
 * uax_url_email) that the Maven Central integ-test distribution lacks (it ships without the
 * analysis-common module). Test-only: lets API keys be created on the secured test node.
 */
public class AnalysisShimPlugin extends Plugin implements AnalysisPlugin {

    @Override
    public Map<String, AnalysisProvider<TokenFilterFactory>> getTokenFilters() {
        return Map.of(
            "pattern_capture", (indexSettings, env, name, settings) -> {
                List<Pattern> patterns = new ArrayList<>();
                for (String p : settings.getAsList("patterns")) {
                    patterns.add(Pattern.compile(p));
                }
                boolean preserve = settings.getAsBoolean("preserve_original", true);
                Pattern[] array = patterns.toArray(new Pattern[0]);
                return new TokenFilterFactory() {
                    public String name() { return name; }
                    public TokenStream create(TokenStream in) {
                        return new PatternCaptureGroupTokenFilter(in, preserve, array);
                    }
                };
            },
            "unique", (indexSettings, env, name, settings) -> new TokenFilterFactory() {
                public String name() { return name; }
                public TokenStream create(TokenStream in) { return new RemoveDuplicatesTokenFilter(in); }
            });
    }

    @Override
    public Map<String, AnalysisProvider<TokenizerFactory>> getTokenizers() {
        return Map.of("uax_url_email", (indexSettings, env, name, settings) -> new TokenizerFactory() {
            public String name() { return name; }
            public Tokenizer create() { return new UAX29URLEmailTokenizer(); }
        });
    }
}
